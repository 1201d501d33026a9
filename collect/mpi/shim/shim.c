/*
 * shim.c: the recording side of parscope's PMPI shim: the per-rank buffer
 * and file, the communicator and string tables, and flushing on exit and
 * on fatal signals. The format is described in shim.h.
 *
 * The shim assumes one thread calls MPI at a time (MPI_THREAD_SINGLE,
 * FUNNELED or SERIALIZED); it takes no lock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the parscope shim writes little-endian files and only builds on little-endian hosts"
#endif

int ps_on;

static int fd = -1;
static char *buf;
static volatile size_t used; /* bytes of complete records in buf */
static size_t cap;
static uint64_t nrec;
static int world_rank;

int64_t ps_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* flush writes the complete records of buf. Async-signal-safe. */
static void flush(void)
{
	size_t n = used, off = 0;
	if (fd < 0)
		return;
	while (off < n) {
		ssize_t w = write(fd, buf + off, n - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		off += (size_t)w;
	}
	used = 0;
}

/* reserve returns room for a record of size bytes, flushing first if the
 * buffer cannot hold it. The record counts once commit is called. */
static char *reserve(size_t size)
{
	if (used + size > cap)
		flush();
	if (size > cap) { /* larger than the whole buffer: grow it */
		char *nb = realloc(buf, size);
		if (!nb)
			return NULL;
		buf = nb;
		cap = size;
	}
	return buf + used;
}

static void commit(size_t size)
{
	used += size;
	nrec++;
}

static void put32(char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(char *p, uint64_t v) { memcpy(p, &v, 8); }

static void record(int type, const void *a, size_t na, const void *b, size_t nb)
{
	size_t size = 4 + na + nb;
	char *p;
	if (fd < 0 || size >= (1u << 24))
		return;
	p = reserve(size);
	if (!p)
		return;
	put32(p, (uint32_t)type | (uint32_t)size << 8);
	if (na)
		memcpy(p + 4, a, na);
	if (nb)
		memcpy(p + 4 + na, b, nb);
	commit(size);
}

void ps_event_write(int type, const ps_event *e)
{
	char *p;
	if (fd < 0)
		return;
	p = reserve(4 + PS_EVENT_SIZE);
	if (!p)
		return;
	put32(p, (uint32_t)type | (uint32_t)(4 + PS_EVENT_SIZE) << 8);
	put64(p + 4, (uint64_t)e->t);
	put64(p + 12, (uint64_t)e->end);
	put64(p + 20, e->site);
	put64(p + 28, e->req);
	put32(p + 36, e->comm);
	put32(p + 40, (uint32_t)e->peer);
	put32(p + 44, (uint32_t)e->tag);
	put32(p + 48, e->fn);
	put64(p + 52, (uint64_t)e->bytes);
	put32(p + 60, (uint32_t)e->src);
	put32(p + 64, (uint32_t)e->stag);
	commit(4 + PS_EVENT_SIZE);
}

static void info(const char *key, const char *value)
{
	record(PS_REC_INFO, key, strlen(key) + 1, value, strlen(value));
}

/* ---- fatal signals: write what is buffered, then die as before ---- */

static const int fatal[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGUSR1};
#define NFATAL (sizeof fatal / sizeof fatal[0])
static struct sigaction old[NFATAL];

static void on_fatal(int sig)
{
	size_t i;
	flush();
	for (i = 0; i < NFATAL; i++)
		if (fatal[i] == sig) {
			sigaction(sig, &old[i], NULL);
			break;
		}
	raise(sig);
}

static void install_handlers(void)
{
	size_t i;
	for (i = 0; i < NFATAL; i++) {
		struct sigaction sa;
		if (sigaction(fatal[i], NULL, &old[i]) != 0)
			continue;
		/* Leave signals the program ignores or handles itself alone. */
		if (old[i].sa_handler == SIG_IGN || (old[i].sa_flags & SA_SIGINFO) || old[i].sa_handler != SIG_DFL)
			continue;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_fatal;
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_RESETHAND;
		sigaction(fatal[i], &sa, NULL);
	}
}

static void at_exit(void)
{
	/* exit() without MPI_Finalize: keep what was recorded (no final record). */
	flush();
}

/* ---- executable mappings ---- */

static void maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		unsigned long long start, end, off;
		char perms[8];
		int n = 0;
		char *path;
		char head[24];
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off, &n) < 4 || n == 0)
			continue;
		if (perms[2] != 'x')
			continue;
		path = line + n;
		path[strcspn(path, "\n")] = 0;
		if (path[0] != '/')
			continue;
		put64(head, start);
		put64(head + 8, end);
		put64(head + 16, off);
		record(PS_REC_MAP, head, 24, path, strlen(path));
	}
	fclose(f);
}

/* ---- strings (user region names) ---- */

#define NSTR 4096
static struct {
	uint64_t hash;
	char *s;
	uint32_t id;
} strs[NSTR];
static uint32_t nstrs;

uint32_t ps_string(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	const char *c;
	size_t i;
	if (!s)
		s = "(null)";
	for (c = s; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	for (i = h % NSTR;; i = (i + 1) % NSTR) {
		if (!strs[i].s)
			break;
		if (strs[i].hash == h && strcmp(strs[i].s, s) == 0)
			return strs[i].id;
	}
	if (nstrs >= NSTR - 1) /* table full: the name of string 0 stands for the rest */
		return 0;
	strs[i].hash = h;
	strs[i].s = strdup(s);
	strs[i].id = ++nstrs;
	{
		char id[4];
		put32(id, strs[i].id);
		record(PS_REC_STRING, id, 4, s, strlen(s));
	}
	return strs[i].id;
}

/* ---- communicators ---- */

struct comm {
	MPI_Comm c;
	uint32_t id;
	int live;
};
static struct comm *comms;
static size_t ncomms, capcomms;
static uint32_t nextcomm;
static size_t lastcomm;

static uint32_t define(MPI_Comm c, int lazy)
{
	MPI_Group g, wg;
	int n = 0, i;
	int *in, *out;
	uint32_t id = nextcomm++;
	char head[12];
	if (ncomms == capcomms) {
		size_t nc = capcomms ? 2 * capcomms : 16;
		struct comm *p = realloc(comms, nc * sizeof *p);
		if (!p)
			return 0;
		comms = p;
		capcomms = nc;
	}
	comms[ncomms].c = c;
	comms[ncomms].id = id;
	comms[ncomms].live = 1;
	lastcomm = ncomms++;
	PMPI_Comm_size(c, &n);
	in = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
	out = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
	if (!in || !out) {
		free(in);
		free(out);
		return id;
	}
	for (i = 0; i < n; i++)
		in[i] = i;
	PMPI_Comm_group(c, &g);
	PMPI_Comm_group(MPI_COMM_WORLD, &wg);
	PMPI_Group_translate_ranks(g, n, in, wg, out);
	PMPI_Group_free(&g);
	PMPI_Group_free(&wg);
	for (i = 0; i < n; i++)
		if (out[i] == MPI_UNDEFINED)
			out[i] = -1;
	put32(head, id);
	put32(head + 4, lazy ? 1 : 0);
	put32(head + 8, (uint32_t)n);
	record(PS_REC_COMM, head, 12, out, sizeof(int) * (size_t)n);
	free(in);
	free(out);
	return id;
}

uint32_t ps_comm(MPI_Comm c)
{
	size_t i;
	if (c == MPI_COMM_WORLD)
		return 0;
	if (lastcomm < ncomms && comms[lastcomm].c == c && comms[lastcomm].live)
		return comms[lastcomm].id;
	for (i = 0; i < ncomms; i++)
		if (comms[i].c == c && comms[i].live) {
			lastcomm = i;
			return comms[i].id;
		}
	return define(c, 1);
}

void ps_comm_created(MPI_Comm c)
{
	if (ps_on && c != MPI_COMM_NULL)
		define(c, 0);
}

void ps_comm_freed(MPI_Comm c)
{
	size_t i;
	for (i = 0; i < ncomms; i++)
		if (comms[i].c == c && comms[i].live) {
			char id[4];
			comms[i].live = 0;
			put32(id, comms[i].id);
			record(PS_REC_FREE, id, 4, NULL, 0);
		}
}

/* ---- conversions ---- */

int64_t ps_bytes(int count, MPI_Datatype t)
{
	int size = 0;
	if (count <= 0 || t == MPI_DATATYPE_NULL)
		return 0;
	PMPI_Type_size(t, &size);
	return (int64_t)count * size;
}

int32_t ps_peer(int p)
{
	if (p == MPI_ANY_SOURCE)
		return PS_ANY;
	if (p == MPI_PROC_NULL)
		return PS_NULL;
	return p;
}

int32_t ps_tag(int t) { return t == MPI_ANY_TAG ? PS_ANY : t; }

uint64_t ps_req(MPI_Request r)
{
	uint64_t h = 0;
	memcpy(&h, &r, sizeof r < 8 ? sizeof r : 8);
	return h;
}

/* ---- start and finish ---- */

void ps_start(void)
{
	const char *dir = getenv("PARSCOPE_MPI_DIR");
	const char *bs = getenv("PARSCOPE_MPI_BUFFER");
	char path[4096], head[PS_HEADER_SIZE];
	int size = 0;
	struct timespec rt;
	int64_t mono;
	uint16_t v16;
	int32_t v32;
	if (!dir || !*dir)
		return;
	PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &size);
	snprintf(path, sizeof path, "%s/rank-%d.psmpi", dir, world_rank);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "parscope shim: rank %d: cannot create %s: %s (not recording)\n", world_rank, path,
			strerror(errno));
		return;
	}
	cap = 1 << 20;
	if (bs && atol(bs) >= 256)
		cap = (size_t)atol(bs);
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		fd = -1;
		return;
	}
	clock_gettime(CLOCK_REALTIME, &rt);
	mono = ps_now();
	memset(head, 0, sizeof head);
	memcpy(head, PS_MAGIC, 8);
	v16 = PS_VERSION;
	memcpy(head + 8, &v16, 2);
	v16 = PS_HEADER_SIZE;
	memcpy(head + 10, &v16, 2);
	v32 = world_rank;
	memcpy(head + 12, &v32, 4);
	v32 = size;
	memcpy(head + 16, &v32, 4);
	v32 = (int32_t)getpid();
	memcpy(head + 20, &v32, 4);
	put64(head + 24, (uint64_t)((int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec));
	put64(head + 32, (uint64_t)mono);
	memcpy(buf, head, sizeof head);
	used = sizeof head;
	{
		char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1] = {0}, host[256] = {0}, exe[4096] = {0};
		int len = 0;
		ssize_t n;
		PMPI_Get_library_version(lib, &len);
		lib[strcspn(lib, "\n")] = 0;
		info("mpi", lib);
		gethostname(host, sizeof host - 1);
		info("host", host);
		n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		if (n > 0) {
			exe[n] = 0;
			info("exe", exe);
		}
	}
	maps();
	nextcomm = 0;
	{
		/* MPI_COMM_WORLD is communicator 0 */
		uint32_t id = define(MPI_COMM_WORLD, 0);
		(void)id;
	}
	install_handlers();
	atexit(at_exit);
	flush(); /* the header and definitions reach the file at once */
	ps_on = 1;
}

void ps_finish(void)
{
	char body[16];
	if (fd < 0)
		return;
	put64(body, (uint64_t)ps_now());
	put64(body + 8, nrec);
	record(PS_REC_FINAL, body, 16, NULL, 0);
	flush();
	close(fd);
	fd = -1;
	ps_on = 0;
}
