// Command registry serves an in-memory OCI registry on a loopback address, for
// installing the provider package into a local Crossplane without a registry
// service or docker. It prints the address it listens on and serves until it
// is stopped.
//
// Loopback only on purpose: image libraries (Crossplane's included) talk
// plain HTTP to 127.0.0.1 without extra settings, and nothing off the machine
// can push to it.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "loopback address to listen on")
	flag.Parse()
	host, _, err := net.SplitHostPort(*listen)
	if err != nil || !(host == "127.0.0.1" || host == "::1" || strings.EqualFold(host, "localhost")) {
		fmt.Fprintf(os.Stderr, "registry: --listen must be a loopback address, got %q\n", *listen)
		os.Exit(2)
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("registry: %v", err)
	}
	fmt.Println(l.Addr().String())
	srv := &http.Server{Handler: registry.New(registry.Logger(log.New(os.Stderr, "registry: ", log.LstdFlags))), ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.Serve(l))
}
