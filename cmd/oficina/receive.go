package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// runReceive is `oficina receive`: a local HTTPS webhook receiver for
// development (docs/api.md, "Testing webhooks on your machine"). Webhook
// URLs are https only, so it serves TLS with a certificate of its own,
// made on first start and kept in --dir: cert.pem is what `oficina dev`
// trusts through OFICINA_EXTRA_CA_FILE. It prints every request it gets
// and, given the endpoint's secret, whether the signature verifies.
func runReceive(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("receive", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:9443", "listen address; webhook URLs name an IPv4 address, never localhost")
	dir := fs.String("dir", filepath.Join("var", "receiver"), "where the certificate (cert.pem, for OFICINA_EXTRA_CA_FILE) and its key are kept")
	secret := fs.String("secret", os.Getenv("OFICINA_RECEIVE_SECRET"),
		"the endpoint's signing secret (whsec_…): check every signature and refuse bad ones with 401 (env OFICINA_RECEIVE_SECRET)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var verify *standardwebhooks.Webhook
	if *secret != "" {
		var err error
		if verify, err = standardwebhooks.NewWebhook(*secret); err != nil {
			return fmt.Errorf("receive: --secret: %w", err)
		}
	}
	certFile := filepath.Join(*dir, "cert.pem")
	cert, made, err := receiverCert(certFile, filepath.Join(*dir, "key.pem"))
	if err != nil {
		return fmt.Errorf("receive: %w", err)
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("receive: %w", err)
	}
	srv := &http.Server{Handler: receiver(stdout, verify), ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	if made {
		fmt.Fprintf(stdout, "receiver: new certificate %s: (re)start Oficina with OFICINA_EXTRA_CA_FILE=%s\n", certFile, certFile)
	}
	fmt.Fprintf(stdout, "receiver: listening on https://%s/ (any path; register e.g. https://%s/hooks)\n"+
		"receiver: Oficina delivers here when started with\n"+
		"  OFICINA_ALLOW_PRIVATE_DESTINATIONS=127.0.0.1/32 OFICINA_EXTRA_CA_FILE=%s make run\n",
		l.Addr(), l.Addr(), certFile)
	if verify == nil {
		fmt.Fprintln(stdout, "receiver: signatures are not checked; start with --secret whsec_… (the endpoint's secret) to check them")
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ServeTLS(l, "", "") }()
	select {
	case err := <-errc:
		return fmt.Errorf("receive: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("receive: %w", err)
	}
	return nil
}

// receiver prints each request: a line with the Standard Webhooks headers
// and the signature's check, the webhook-signature header, and the body as
// received (what the signature covers). It answers 204, or 401 to a bad
// signature when it checks them.
func receiver(out io.Writer, verify *standardwebhooks.Webhook) http.Handler {
	var mu sync.Mutex // one request's lines together
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		check, status := "unchecked", http.StatusNoContent
		if verify != nil {
			check = "valid"
			if err := verify.Verify(body, r.Header); err != nil {
				check, status = "invalid ("+err.Error()+")", http.StatusUnauthorized
			}
		}
		mu.Lock()
		fmt.Fprintf(out, "\n%s %s webhook-id=%s webhook-timestamp=%s signature=%s\nwebhook-signature: %s\n%s\n",
			r.Method, r.URL.Path, r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp"), check,
			r.Header.Get("webhook-signature"), body)
		mu.Unlock()
		w.WriteHeader(status)
	})
}

// receiverCert loads the receiver's certificate and key, or makes them
// (made) when missing, unreadable or expiring within a day.
func receiverCert(certFile, keyFile string) (cert tls.Certificate, made bool, err error) {
	if c, err := tls.LoadX509KeyPair(certFile, keyFile); err == nil && time.Until(c.Leaf.NotAfter) > 24*time.Hour {
		return c, false, nil
	}
	certPEM, keyPEM, err := selfSigned(time.Now())
	if err != nil {
		return cert, false, err
	}
	if err := os.MkdirAll(filepath.Dir(certFile), 0o700); err != nil {
		return cert, false, err
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return cert, false, err
	}
	if err := os.WriteFile(certFile, certPEM, 0o644); err != nil {
		return cert, false, err
	}
	cert, err = tls.X509KeyPair(certPEM, keyPEM)
	return cert, true, err
}

// selfSigned makes a certificate for 127.0.0.1, ::1 and localhost, valid
// for two years, that is its own CA: this machine's receivers only.
func selfSigned(now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: "oficina receive (local webhook receiver)"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(2, 0, 0),
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), nil
}
