package sandbox_test

import (
	"testing"

	"github.com/rewardd/rewardd/internal/sandboxtest"
)

func TestMain(m *testing.M) { sandboxtest.Main(m) }
