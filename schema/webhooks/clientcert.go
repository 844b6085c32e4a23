package webhooks

import (
	"crypto/tls"
	"crypto/x509"
	"time"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
)

// Mutual TLS (issue 27 item 2): an endpoint whose receiver demands a client
// certificate gets one, presented on every delivery. The certificate and
// its key are secrets of the company, sealed with the signing secrets; the
// endpoint shows the certificate's subject and expiry only.

// MaxClientCertificatePEM bounds the certificate chain and the key.
const MaxClientCertificatePEM = 64 << 10

// WebhookClientCertificateInput is a client certificate as set: the
// certificate (its chain after it, if any) and its private key, PEM.
type WebhookClientCertificateInput struct {
	Certificate string `json:"certificate" api:"required" doc:"The client certificate in PEM, followed by its intermediates if the receiver needs them."`
	PrivateKey  string `json:"private_key" api:"required" doc:"Its private key in PEM (PKCS #1, PKCS #8 or EC); sealed at rest and never shown again."`
}

// WebhookClientCertificate is what an endpoint shows of its client
// certificate.
type WebhookClientCertificate struct {
	Subject   string       `json:"subject" doc:"The certificate's subject, as its distinguished name."`
	ExpiresAt apitime.Time `json:"expires_at" doc:"When it expires: deliveries fail the receiver's handshake after that; set a new one before."`
}

// ClientCertificate is a client certificate in clear: in memory only.
type ClientCertificate struct {
	CertificatePEM string `json:"certificate"`
	KeyPEM         string `json:"private_key"`
}

// String hides the key, so a value printed by mistake shows none.
func (ClientCertificate) String() string { return "webhooks.ClientCertificate{…}" }

// TLS is the certificate as a TLS client presents it.
func (c ClientCertificate) TLS() (tls.Certificate, error) {
	return tls.X509KeyPair([]byte(c.CertificatePEM), []byte(c.KeyPEM))
}

// checkClientCertificate adds a field error when in cannot be presented at
// now (param client_certificate: malformed, a key of another certificate,
// expired), and returns it with its leaf.
func checkClientCertificate(f *apierr.Fields, in *WebhookClientCertificateInput, now time.Time) (*ClientCertificate, *x509.Certificate) {
	switch {
	case in.Certificate == "" || in.PrivateKey == "":
		f.Add("client_certificate", apierr.Required)
		return nil, nil
	case len(in.Certificate)+len(in.PrivateKey) > MaxClientCertificatePEM:
		f.Add("client_certificate", apierr.TooLong)
		return nil, nil
	}
	c := &ClientCertificate{CertificatePEM: in.Certificate, KeyPEM: in.PrivateKey}
	pair, err := c.TLS()
	if err != nil {
		f.Add("client_certificate", apierr.InvalidValue)
		return nil, nil
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil || !now.Before(leaf.NotAfter) {
		f.Add("client_certificate", apierr.InvalidValue)
		return nil, nil
	}
	return c, leaf
}

// clientCertificateView is what the endpoint shows of its certificate.
func (e *Row) clientCertificateView() *WebhookClientCertificate {
	if e.ClientCertificateSubject == nil || e.ClientCertificateExpiresAt == nil {
		return nil
	}
	return &WebhookClientCertificate{Subject: *e.ClientCertificateSubject, ExpiresAt: apitime.At(*e.ClientCertificateExpiresAt)}
}

// setClientCertificate notes the clear part of a certificate set (nil:
// removed) on the row; a new certificate has not been warned about.
func (e *Row) setClientCertificate(leaf *x509.Certificate) {
	e.ClientCertificateWarnedAt = nil
	if leaf == nil {
		e.ClientCertificateSubject, e.ClientCertificateExpiresAt = nil, nil
		return
	}
	subject, until := leaf.Subject.String(), leaf.NotAfter.UTC()
	e.ClientCertificateSubject, e.ClientCertificateExpiresAt = &subject, &until
}
