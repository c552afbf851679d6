package jose

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"math/big"
	"testing"
)

// TestES256LowS: signatures are made with the low S, and the high-S twin
// of a valid signature (the same R, N-S, which ECDSA itself accepts) is
// refused, so that a signature is not malleable.
func TestES256LowS(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSigner("k", key)
	if err != nil {
		t.Fatal(err)
	}
	n := elliptic.P256().Params().N
	half := new(big.Int).Rsh(n, 1)
	header, err := EncodeHeader(Header{Alg: ES256, KeyID: "k"})
	if err != nil {
		t.Fatal(err)
	}
	input := []byte(header + "." + encode([]byte("payload")))
	for range 64 { // half of random signatures would be high-S
		sig, err := s.Sign(input)
		if err != nil {
			t.Fatal(err)
		}
		if new(big.Int).SetBytes(sig[32:]).Cmp(half) > 0 {
			t.Fatal("Sign made a high-S signature")
		}
		if err := Verify([]string{ES256}, ES256, s.Key(), input, sig); err != nil {
			t.Fatalf("a low-S signature is refused: %v", err)
		}
		twin := make([]byte, 64)
		copy(twin, sig[:32])
		new(big.Int).Sub(n, new(big.Int).SetBytes(sig[32:])).FillBytes(twin[32:])
		if err := Verify([]string{ES256}, ES256, s.Key(), input, twin); !errors.Is(err, ErrSignature) {
			t.Fatalf("the high-S twin of a signature: %v, want ErrSignature", err)
		}
	}
}

// TestDecodeObjectTrailing: bytes after the object, whatever they are,
// are an error; white space is not.
func TestDecodeObjectTrailing(t *testing.T) {
	for _, in := range []string{`{"alg":"ES256"}x`, `{"alg":"ES256"}}`, `{"alg":"ES256"}{}`, `{"alg":"ES256"} 1`, "{\"alg\":\"ES256\"}\x00"} {
		if _, err := decodeObject([]byte(in)); err == nil {
			t.Errorf("decodeObject(%q) accepted trailing bytes", in)
		}
	}
	for _, in := range []string{`{"alg":"ES256"}`, "{\"alg\":\"ES256\"} \n\t"} {
		if _, err := decodeObject([]byte(in)); err != nil {
			t.Errorf("decodeObject(%q): %v", in, err)
		}
	}
}
