package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
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
prints the URL. It is read-only and serves only the traces named here, by
their index: no request names a file. The page and its libraries are
embedded in the binary; nothing is loaded from the network. Source lines
are read only from inside the --source-dir directories (see analyze).`,
		Example: `  parscope serve amoeba.pst
  parscope serve --addr 127.0.0.1:8080 before.pst after.pst`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var bundles []*report.Bundle
			for _, a := range args {
				b, err := f.build(cmd.Context(), a)
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
