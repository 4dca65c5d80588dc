package sqlitestore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/session/sqlitestore"
)

func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "sessions")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	store, err := sqlitestore.Open(ctx, filepath.Join(dir, "sessions.db"), nil)
	if err != nil {
		panic(err)
	}
	defer store.Close()
	// A runner does this after every completed turn.
	_ = store.Append(ctx, "demo", []model.Message{model.UserMessage("hello")}, map[string]any{"turns": 1})
	s, _ := store.Get(ctx, "demo")
	fmt.Println(len(s.Messages), s.Messages[0].Text, s.State["turns"])
	// Output: 1 hello 1
}
