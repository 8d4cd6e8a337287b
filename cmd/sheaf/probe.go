package main

import (
	"fmt"
	"net/http"
	"time"

	"github.com/spf13/cobra"
)

// probeCmd checks that a server answers HTTP: the health check of the
// container image, which has no shell or curl.
func probeCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "probe URL",
		Short:  "Exit 0 when URL answers HTTP with a status below 500 (a container health check)",
		Args:   cobra.ExactArgs(1),
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			c := &http.Client{Timeout: 3 * time.Second}
			resp, err := c.Get(args[0])
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode >= 500 {
				return fmt.Errorf("%s: %s", args[0], resp.Status)
			}
			return nil
		},
	}
}
