package cluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
)

// writeServiceAccountKeys generates the key pair kube-apiserver signs and
// verifies service-account tokens with (--service-account-signing-key-file,
// --service-account-key-file). ECDSA P-256 (ES256) is one of the algorithms
// the API server accepts, and is quick to generate.
func writeServiceAccountKeys(privPath, pubPath string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate service-account key: %w", err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("marshal service-account key: %w", err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return fmt.Errorf("marshal service-account public key: %w", err)
	}
	if err := os.WriteFile(privPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(pubPath, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644)
}

// extractCA reads the serving certificate bundle kube-apiserver wrote into its
// --cert-dir (apiserver.crt: the serving certificate followed by the
// self-signed CA that issued it) and returns the CA certificates, PEM encoded.
func extractCA(bundlePath string) ([]byte, error) {
	rest, err := os.ReadFile(bundlePath)
	if err != nil {
		return nil, err
	}
	var out []byte
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parse certificate in %s: %w", bundlePath, err)
		}
		if cert.IsCA {
			out = append(out, pem.EncodeToMemory(block)...)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no CA certificate in " + bundlePath)
	}
	return out, nil
}
