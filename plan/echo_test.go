package plan

import (
	"strings"
	"testing"

	"github.com/parscope/parscope/format"
)

// TestLongValuesClipped checks that an over-long value, field name or name
// of a platform file (YAML keys are at most 1024 bytes) is echoed as its first bytes and its length, not
// whole.
func TestLongValuesClipped(t *testing.T) {
	const ok = `task: {size: 8KiB, result: 1KiB}
clusters:
  - name: a
    master: true
    nodes:
      - {name: n, task_time: 1s}
`
	long := strings.Repeat("z", 100_000)
	head := long[:format.MaxEcho] + "… (100000 bytes)"
	for _, c := range []struct{ yaml, want string }{
		{strings.Replace(ok, "task_time: 1s", "task_time: "+long, 1), `task_time: expected a positive duration (250ms, 1.5s, or a number of seconds), got "` + head + `"`},
		{strings.Replace(ok, "size: 8KiB", "size: "+long, 1), `task.size: expected a size (8KiB, 1MB, 4096), got "` + head + `"`},
		{strings.Replace(ok, "    master: true\n", "    master: "+long+"\n", 1), `clusters[0].master: expected true or false, got "` + head + `"`},
		{strings.Replace(ok, "task_time: 1s", "task_time: 1s, count: "+long, 1), `count: expected an integer from 1 to 100000, got "` + head + `"`},
		{strings.Replace(ok, "task_time: 1s", "task_time: 1s, "+long[:1000]+": 1", 1), "clusters[0].nodes[0]." + long[:format.MaxEcho] + "… (1000 bytes): unknown field"},
		{strings.Replace(ok, "name: a", "name: "+long, 1) + "  - name: " + long + "\n    inet_in: 1MB/s\n    inet_out: 1MB/s\n    nodes: [{name: m, task_time: 1}]\n", `cluster "` + head + `" already defined`},
		{strings.Replace(ok, "{name: n, task_time: 1s}", "{name: "+long+", task_time: 1s}\n      - {name: "+long+", task_time: 1s}", 1), `node "` + head + `" appears twice in cluster "a"`},
	} {
		_, err := Read(strings.NewReader(c.yaml), "f.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) || len(err.Error()) > 400 {
			t.Errorf("%.300v\nwant a short message containing %q", err, c.want)
		}
	}
	if _, err := ParseQuantity(long, true); err == nil || !strings.Contains(err.Error(), head) || len(err.Error()) > 400 {
		t.Errorf("ParseQuantity: %.300v", err)
	}
}
