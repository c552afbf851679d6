package a2agrpc

import (
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/grpcpb"
)

// randomValue is a JSON value nesting at most depth objects and arrays,
// some of them empty.
func randomValue(r *rand.Rand, depth int) *structpb.Value {
	if depth == 0 || r.IntN(4) == 0 {
		return structpb.NewStringValue("leaf")
	}
	n := r.IntN(3)
	if r.IntN(2) == 0 {
		l := &structpb.ListValue{}
		for range n {
			l.Values = append(l.Values, randomValue(r, depth-1))
		}
		return structpb.NewListValue(l)
	}
	s := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	for i := range n {
		s.Fields[string(rune('a'+i))] = randomValue(r, depth-1)
	}
	return structpb.NewStructValue(s)
}

// randomRequest is a request with some of its optional parts set.
func randomRequest(r *rand.Rand) proto.Message {
	switch r.IntN(3) {
	case 0:
		return &grpcpb.ListTasksRequest{ContextId: "c", StatusTimestampAfter: timestamppb.Now()}
	case 1:
		cfg := &grpcpb.TaskPushNotificationConfig{TaskId: "t", Url: "https://example.com/"}
		if r.IntN(2) == 0 {
			cfg.Authentication = &grpcpb.AuthenticationInfo{Scheme: "Bearer"}
		}
		return cfg
	}
	m := &grpcpb.Message{MessageId: "m", Role: grpcpb.Role_ROLE_USER}
	for range r.IntN(3) {
		p := &grpcpb.Part{Content: &grpcpb.Part_Text{Text: "t"}}
		if r.IntN(2) == 0 {
			p.Content = &grpcpb.Part_Data{Data: randomValue(r, 12)}
		}
		if r.IntN(3) == 0 {
			p.Metadata = randomValue(r, 6).GetStructValue()
		}
		m.Parts = append(m.Parts, p)
	}
	req := &grpcpb.SendMessageRequest{Message: m}
	if r.IntN(2) == 0 {
		req.Metadata = randomValue(r, 12).GetStructValue()
	}
	if r.IntN(2) == 0 {
		req.Configuration = &grpcpb.SendMessageConfiguration{AcceptedOutputModes: []string{"text/plain"}}
	}
	return req
}

// The depth of a message is the depth a2a.CheckDepth finds in its
// ProtoJSON, whatever the limit.
func TestDepthMatchesProtoJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		m := randomRequest(r)
		b, err := protojson.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		for max := 1; max <= 16; max++ {
			want := a2a.CheckDepth(b, max) != nil
			if got := tooDeep(m.ProtoReflect(), max); got != want {
				t.Fatalf("case %d, max %d: tooDeep = %v, CheckDepth refuses: %v\n%s", i, max, got, want, b)
			}
		}
	}
	if tooDeep((&grpcpb.SendMessageRequest{Metadata: randomValue(r, 100).GetStructValue()}).ProtoReflect(), 0) {
		t.Error("a limit of 0 refused a message")
	}
}
