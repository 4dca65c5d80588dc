package workspace_test

import (
	"context"
	"testing"
	"time"

	"github.com/paigasus/helikon/workspace"
)

func TestLabelsForCarryTheTenant(t *testing.T) {
	now := time.Unix(1700000000, 0)
	if l := workspace.LabelsFor(context.Background(), "s1", now); l[workspace.LabelTenant] != "" || l[workspace.LabelSession] != "s1" {
		t.Errorf("without a tenant: %v", l)
	}
	if l := workspace.LabelsFor(workspace.WithTenant(context.Background(), ""), "s1", now); len(l) != len(workspace.Labels("s1", now)) {
		t.Errorf("an empty tenant added a label: %v", l)
	}
	l := workspace.LabelsFor(workspace.WithTenant(context.Background(), "payments"), "s1", now)
	if l[workspace.LabelTenant] != "payments" || l[workspace.LabelSession] != "s1" {
		t.Errorf("with tenant payments: %v", l)
	}
}
