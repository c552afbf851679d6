package jose

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"strings"
	"testing"
)

func TestJWKSRoundTrip(t *testing.T) {
	ss := signers(t)
	var keys []Key
	for i, s := range ss[:3] {
		k := s.Key()
		k.KeyID = string(rune('a' + i))
		keys = append(keys, k)
	}
	keys[1].Alg = "" // an RSA key with no alg still fits RS256
	data, err := MarshalJWKS(keys...)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), `"d"`) {
		t.Fatalf("private part published: %s", data)
	}
	ks, err := ParseJWKS(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(ks.Keys) != 3 {
		t.Fatalf("%d keys", len(ks.Keys))
	}
	if !ks.Keys[0].Public.(*ecdsa.PublicKey).Equal(keys[0].Public) ||
		!ks.Keys[1].Public.(*rsa.PublicKey).Equal(keys[1].Public) ||
		!ks.Keys[2].Public.(ed25519.PublicKey).Equal(keys[2].Public) {
		t.Fatal("keys changed in the round trip")
	}
	if got := ks.Find("b", RS256); len(got) != 1 || got[0].KeyID != "b" {
		t.Fatalf("Find(b, RS256) = %v", got)
	}
	if got := ks.Find("b", ES256); len(got) != 0 {
		t.Fatalf("Find(b, ES256) = %v", got)
	}
	if got := ks.Find("", EdDSA); len(got) != 1 || got[0].KeyID != "c" {
		t.Fatalf("Find('', EdDSA) = %v", got)
	}
	if got := ks.Find("zz", ES256); len(got) != 0 {
		t.Fatalf("unknown kid found %v", got)
	}
	// A key parsed from the set verifies what the signer signed.
	tok, _ := SignCompact(ss[0], "", []byte("{}"))
	h, _, input, sig, _ := ParseCompact(tok)
	if err := Verify(all, h.Alg, ks.Find("a", h.Alg)[0], input, sig); err != nil {
		t.Fatal(err)
	}
}

func TestMarshalJWKSRefusesSecrets(t *testing.T) {
	if _, err := MarshalJWKS(signers(t)[3].Key()); err == nil {
		t.Fatal("an HS256 secret was published")
	}
}

func TestParseJWKSSkipsAndRefuses(t *testing.T) {
	ed := signers(t)[2].Key()
	good, _ := MarshalJWKS(ed)
	var set struct{ Keys []map[string]any }
	_ = json.Unmarshal(good, &set)
	edJWK := set.Keys[0]
	with := func(changes map[string]any) string {
		m := map[string]any{}
		for k, v := range edJWK {
			m[k] = v
		}
		for k, v := range changes {
			if v == nil {
				delete(m, k)
			} else {
				m[k] = v
			}
		}
		b, _ := json.Marshal(map[string]any{"keys": []any{m}})
		return string(b)
	}
	skipped := map[string]string{
		"use enc":   with(map[string]any{"use": "enc"}),
		"oct":       `{"keys":[{"kty":"oct","k":"c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0"}]}`,
		"X25519":    with(map[string]any{"crv": "X25519"}),
		"P-384":     `{"keys":[{"kty":"EC","crv":"P-384","x":"AA","y":"AA"}]}`,
		"alg PS256": `{"keys":[{"kty":"RSA","alg":"PS256","n":"AA","e":"AQAB"}]}`,
		"unknown":   `{"keys":[{"kty":"XYZ"}]}`,
	}
	for name, data := range skipped {
		ks, err := ParseJWKS([]byte(data))
		if err != nil || len(ks.Keys) != 0 {
			t.Errorf("%s: %v %v, want skipped", name, ks, err)
		}
	}
	// A key of a usable type with bad parameters is left out and said
	// why, so that one legacy or broken key does not take down the keys
	// beside it.
	unusable := map[string]string{
		"short x":      with(map[string]any{"x": "AAAA"}),
		"padded x":     with(map[string]any{"x": edJWK["x"].(string) + "="}),
		"alg mismatch": with(map[string]any{"alg": "ES256"}),
		"off curve":    `{"keys":[{"kty":"EC","crv":"P-256","x":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","y":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAE"}]}`,
		"small RSA":    `{"keys":[{"kid":"old","kty":"RSA","n":"` + strings.Repeat("A", 170) + `w","e":"AQAB"}]}`,
	}
	for name, data := range unusable {
		ks, err := ParseJWKS([]byte(data))
		if err != nil || len(ks.Keys) != 0 || len(ks.Skipped) != 1 || !strings.HasPrefix(ks.Skipped[0], "key 0") {
			t.Errorf("%s: %+v %v, want one key skipped and said why", name, ks, err)
		}
	}
	var mixed struct{ Keys []any }
	_ = json.Unmarshal([]byte(unusable["small RSA"]), &mixed)
	data, _ := json.Marshal(map[string]any{"keys": append(mixed.Keys, edJWK)})
	ks, err := ParseJWKS(data)
	if err != nil || len(ks.Keys) != 1 || ks.Keys[0].KeyID != ed.KeyID || len(ks.Skipped) != 1 || !strings.Contains(ks.Skipped[0], `kid "old"`) {
		t.Errorf("a good key beside a weak one: %+v %v", ks, err)
	}

	refused := map[string]string{
		"not JSON": `{`,
		"no keys":  `{}`,
		"private":  with(map[string]any{"d": "AAAA"}),
	}
	for name, data := range refused {
		if _, err := ParseJWKS([]byte(data)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}
