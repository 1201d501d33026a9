package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

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
are read only from inside the --source-dir directories (see analyze).`,
		Example: `  parscope serve amoeba.pst
  parscope serve --addr 127.0.0.1:8080 before.pst after.pst`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var bundles []*report.Bundle
			for _, a := range args {
				b, err := f.build(cmd, a)
				if err != nil {
					return err
				}
				bundles = append(bundles, b)
			}
			h, err := web.NewServer(bundles)
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			if ip := ln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: listening on %s, which is not a loopback address: anyone who reaches it sees these traces\n", ln.Addr())
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
