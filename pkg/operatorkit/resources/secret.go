package resources

import (
	"crypto/rand"
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// passwordAlphabet has no characters that need quoting in a shell, a URL
// or a configuration file.
const passwordAlphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"

// GeneratePassword returns n random characters from crypto/rand.
func GeneratePassword(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating a password: %w", err)
	}
	for i := range b {
		b[i] = passwordAlphabet[int(b[i])%len(passwordAlphabet)]
	}
	return string(b), nil
}

// SetSecretPassword sets key in s.Data to a generated password of n
// characters. Call it from a Resource's InitialData: the Registry keeps
// the live value once the Secret exists, so the password never changes.
// (Use Data, not StringData, which the API server never returns.)
func SetSecretPassword(s *corev1.Secret, key string, n int) error {
	p, err := GeneratePassword(n)
	if err != nil {
		return err
	}
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	s.Data[key] = []byte(p)
	return nil
}
