package memory_test

import (
	"testing"

	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/memory"
	"github.com/goa2a/a2a/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(*testing.T) store.Store { return memory.New() })
}
