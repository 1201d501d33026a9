package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/internal/progress"
	"github.com/parscope/parscope/report"
	"github.com/parscope/parscope/show/web"
)

func init() {
	var (
		f    reportFlags
		addr string
	)
	cmd := &cobra.Command{
		Use:   "serve TRACE... [--addr 127.0.0.1:0]",
		Short: "Show traces in the browser: a local, read-only web UI",
		Long: `Serve analyses the traces named (as analyze does, once, at startup) and
serves the views of the report from a local web server: overview, phase
space in 3D, PCA, entropy, occupancy, communication per code structure with
the source lines, phases, modified entropy, the probe result given with
--probe, and two traces side by side (compare).

It binds the loopback interface by default (port 0 picks a free port) and
prints the URL. It answers only requests addressed to a loopback name
(localhost, 127.x.x.x, [::1]) or to the address given with --addr, so that
a web page whose name is re-pointed at this machine (DNS rebinding) cannot
read the traces; every page carries a strict Content-Security-Policy. It is read-only and serves only the traces named here, by
their index: no request names a file. The page and its libraries are
embedded in the binary; nothing is loaded from the network. Source lines
are read only from inside the --source-dir directories (see analyze).

The page selects processes interactively: the Processes, Exclude and
States from fields at the top (as --procs, --exclude-procs and
--states-from) analyse the trace again for that selection and show every
view of it; Reset returns to the analyses of the command line. The traces
stay open (a trace imported on the fly in its temporary .pst) until the
server stops; the last few selections are kept, each computed once.`,
		Example: `  parscope serve amoeba.pst
  parscope serve --addr 127.0.0.1:8080 before.pst after.pst`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := f.options()
			if err != nil {
				return err
			}
			// Each trace stays open while the server runs: the UI may ask
			// for it analysed again for a selection of processes.
			var (
				traces   []*openedTrace
				bundles  []*report.Bundle
				builders []web.Builder
			)
			defer func() {
				for _, t := range traces {
					t.Close()
				}
			}()
			for _, a := range args {
				t, err := openTrace(cmd, a)
				if err != nil {
					return err
				}
				traces = append(traces, t)
				b, err := buildReport(cmd.Context(), t.Store, opts)
				if err != nil {
					return err
				}
				bundles = append(bundles, b)
				builders = append(builders, selectionBuilder(t, opts))
			}
			h, err := web.NewSelectingServer(cmd.Context(), bundles, builders)
			if err != nil {
				return err
			}
			// The server keeps the results (a few MB); the memory that
			// computing them took is garbage now. Give it back to the
			// system rather than let the server sit on the peak.
			debug.FreeOSMemory()
			// Before the stores close (deferred above, so run after).
			defer h.Close()
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			if ip := ln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
				progress.Warnf(cmd.ErrOrStderr(), "listening on %s, which is not a loopback address: anyone who reaches it sees these traces", ln.Addr())
				for _, host := range boundHosts(addr, ip) {
					h.AllowHost(host)
				}
			}
			srv := web.NewHTTPServer(h)
			fmt.Fprintf(cmd.OutOrStdout(), "serving %d trace(s) at http://%s/ (Ctrl-C to stop)\n", len(bundles), ln.Addr())
			done := make(chan error, 1)
			go func() { done <- srv.Serve(ln) }()
			select {
			case err := <-done:
				return err
			case <-cmd.Context().Done():
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if err := srv.Shutdown(ctx); err != nil {
					return err
				}
				if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
					return err
				}
				return nil
			}
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "the address to listen on (host:port; port 0 picks a free one)")
	root.AddCommand(cmd)
}

// selectionBuilder returns the web.Builder of the open trace t: the report
// of t with the options of the command line, but the processes and the
// source of states of the selection a request asks for (those of the
// command line do not carry over).
func selectionBuilder(t *openedTrace, opts report.Options) web.Builder {
	return func(ctx context.Context, sel web.Selection) (*report.Bundle, error) {
		o := opts
		o.Procs, o.ExcludeProcs, o.States = sel.Procs, sel.Exclude, sel.States
		return report.FromStore(ctx, t.Store, o)
	}
}

// boundHosts lists the host names a server bound on purpose to the
// non-loopback address addr (as given to --addr, listening on ip) is
// reached by: the host of addr, and for a wildcard address (0.0.0.0, ::)
// the addresses of the machine's interfaces and its host name.
func boundHosts(addr string, ip net.IP) []string {
	var hosts []string
	if host, _, err := net.SplitHostPort(addr); err == nil && host != "" {
		hosts = append(hosts, host)
	}
	if !ip.IsUnspecified() {
		return append(hosts, ip.String())
	}
	if as, err := net.InterfaceAddrs(); err == nil {
		for _, a := range as {
			if n, ok := a.(*net.IPNet); ok {
				hosts = append(hosts, n.IP.String())
			}
		}
	}
	if name, err := os.Hostname(); err == nil {
		hosts = append(hosts, name)
	}
	return hosts
}
