package agentsandbox

import (
	"context"
	"errors"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	extv1alpha1 "sigs.k8s.io/agent-sandbox/extensions/api/v1alpha1"

	"github.com/paigasus/helikon/workspace"
)

// claimName is a new claim's name: "helikon-", the session made a DNS
// label, and a random suffix so that a Create after a failed one never
// meets its leftover. The controller names the Sandbox and its Service
// after the claim, so the name must be an RFC 1035 label: at most 63
// lower-case letters, digits and '-', starting with a letter.
func claimName(session string) string {
	s := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '-'
	}, session)
	const maxSession = 63 - len("helikon-") - len("-") - suffixLen
	if len(s) > maxSession {
		s = s[:maxSession]
	}
	return "helikon-" + strings.Trim(s, "-") + "-" + randomSuffix(suffixLen)
}

// suffixLen is the random part of a claim name: 32 bits.
const suffixLen = 8

// claimLabels returns the labels of a new claim of session and the
// annotations that keep the exact values of those a label value cannot hold.
// The keys of [workspace.Labels] (io.helikon.session, ...) are valid
// Kubernetes label names as they are: a name of at most 63 characters of
// [A-Za-z0-9._-], with no prefix. Their values need not be valid label
// values (a host name is up to 253 characters, a user name may hold '@' or
// '\'): such a value is stored in an annotation under the same key, and the
// label gets a valid stand-in, so selectors on helikon's labels still work.
func (e *Engine) claimLabels(ctx context.Context, session string, now time.Time) (labels, annotations map[string]string) {
	labels = map[string]string{}
	for k, v := range e.opts.Labels {
		labels[k] = v
	}
	for k, v := range workspace.LabelsFor(ctx, session, now) {
		if len(validation.IsValidLabelValue(v)) == 0 {
			labels[k] = v
			continue
		}
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[k] = v
		labels[k] = labelValue(v)
	}
	return labels, annotations
}

// labelValue maps v to a valid label value: characters outside
// [A-Za-z0-9._-] become '_', at most 63 are kept, and the ends are trimmed
// to alphanumerics.
func labelValue(v string) string {
	s := strings.Map(func(r rune) rune {
		if r < 0x80 && (r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return r
		}
		return '_'
	}, v)
	if len(s) > validation.LabelValueMaxLength {
		s = s[:validation.LabelValueMaxLength]
	}
	return strings.Trim(s, "-_.")
}

// validLabel checks an operator's label as the API server would.
func validLabel(k, v string) error {
	if errs := validation.IsQualifiedName(k); len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// infoOf describes a claim as [workspace.Info], helikon's labels with the
// exact values the annotations kept.
func infoOf(c *extv1alpha1.SandboxClaim) workspace.Info {
	l := map[string]string{}
	for k, v := range c.Labels {
		l[k] = v
		if a, ok := c.Annotations[k]; ok && strings.HasPrefix(k, "io.helikon.") {
			l[k] = a
		}
	}
	info := workspace.Info{
		ID:      c.Name,
		Engine:  EngineName,
		Session: l[workspace.LabelSession],
		Labels:  l,
		Created: workspace.CreatedAt(l),
		State:   claimState(c),
	}
	if info.Created.IsZero() && !c.CreationTimestamp.IsZero() {
		info.Created = c.CreationTimestamp.Time
	}
	return info
}
