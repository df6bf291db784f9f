// Package tokenuse says what the service tokens an AccessPolicy's or
// AccessGroup's rules name amount to: whether Cloudflare deleted one,
// and whether the organization's strict service token authentication
// empties an Allow policy's token rules. It also lets a rule's
// serviceTokenRef follow a token made again in place of a deleted one.
package tokenuse

import (
	"context"
	"fmt"
	"strings"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
)

// Use is how a policy's or group's rules use service tokens.
type Use struct {
	// Decision of the policy; "" for a group.
	Decision string
	// Named are the service tokens the rules name by ID.
	Named []Named
	// AnyValid: a rule lets in any valid service token.
	AnyValid bool
	// Strict is the organization's strict service token authentication;
	// nil when not read or not answered.
	Strict *bool
}

// Named is one service token a rule names.
type Named struct {
	ID string
	// Holder is the AccessServiceToken holding the ID ("" when none in
	// the namespace does).
	Holder string
	// Deleted: the holder reports the token deleted in Cloudflare, or
	// made another in its place (ReplacedBy).
	Deleted bool
	// ReplacedBy is the token the holder made in place of this one.
	ReplacedBy string
}

// NamesTokens says whether the rules name service tokens at all.
func (u Use) NamesTokens() bool { return len(u.Named) > 0 || u.AnyValid }

// Condition is the ServiceTokens condition for u.
func Condition(u Use) xpv2.Condition {
	// The time only ever shows when the condition changes: SetConditions
	// keeps an equal condition's.
	c := xpv2.Condition{Type: v1alpha1.TypeServiceTokens, Status: "True", LastTransitionTime: metav1.Now()}
	switch deleted := deletedTokens(u.Named); {
	case !u.NamesTokens():
		c.Reason, c.Message = v1alpha1.ReasonNoServiceTokens, "the rules name no service token"
	case deleted != "":
		c.Status, c.Reason = "False", v1alpha1.ReasonServiceTokenDeleted
		c.Message = "deleted in Cloudflare, so these rules no longer let it in: " + deleted + ". Its AccessServiceToken says why; spec.onDeletedInCloudflare: Recreate there makes a new token, which a serviceTokenRef follows (a serviceTokenId does not)"
	case u.Decision == "allow" && u.Strict != nil && *u.Strict:
		c.Status, c.Reason = "False", v1alpha1.ReasonStrictServiceTokenAuth
		c.Message = "this Allow policy names service tokens, but the organization's strict service token authentication is on: Access ignores Allow policies for requests that carry service token headers, so these rules let no service token in. Use decision non_identity (Service Auth) for machines"
	case u.Decision == "allow":
		c.Reason = v1alpha1.ReasonLenientServiceTokenAuth
		c.Message = "this Allow policy's service token rules count only for a visitor who also logs in, and only while the organization's strict service token authentication is " + lenient(u.Strict) + "; use decision non_identity (Service Auth) for machines"
	default:
		c.Reason, c.Message = v1alpha1.ReasonServiceTokensEffective, "the service tokens the rules name exist"
	}
	return c
}

func lenient(strict *bool) string {
	if strict == nil {
		return "off (Cloudflare did not say; organizations made since 2026-10-05 have it on)"
	}
	return "off"
}

func deletedTokens(named []Named) string {
	var d []string
	for _, n := range named {
		switch {
		case n.ReplacedBy != "":
			d = append(d, fmt.Sprintf("service token %s (AccessServiceToken %s, which made %s in its place: name that)", n.ID, n.Holder, n.ReplacedBy))
		case n.Deleted:
			d = append(d, fmt.Sprintf("service token %s (AccessServiceToken %s)", n.ID, n.Holder))
		}
	}
	return strings.Join(d, ", ")
}

// Of is the Use of the rules of a resource of namespace ns, the tokens'
// holders read from the AccessServiceTokens of ns (a rule naming another
// namespace's token is refused before this). Strict is left to the
// caller.
func Of(ctx context.Context, kube client.Reader, ns, decision string, lists ...[]v1alpha1.AccessRule) (Use, error) {
	u := Use{Decision: decision}
	for _, l := range lists {
		for _, r := range l {
			u.AnyValid = u.AnyValid || (r.AnyValidServiceToken != nil && *r.AnyValidServiceToken)
			if r.ServiceTokenID == nil || *r.ServiceTokenID == "" {
				continue
			}
			n, err := holder(ctx, kube, ns, *r.ServiceTokenID)
			if err != nil {
				return Use{}, err
			}
			u.Named = append(u.Named, n)
		}
	}
	return u, nil
}

func holder(ctx context.Context, kube client.Reader, ns, id string) (Named, error) {
	l := &v1alpha1.AccessServiceTokenList{}
	if err := kube.List(ctx, l, client.InNamespace(ns), client.MatchingFields{mr.ExternalNameIndex: id}); err != nil {
		return Named{}, errors.Wrap(err, "cannot list AccessServiceTokens")
	}
	n := Named{ID: id}
	for _, t := range l.Items {
		n.Holder = t.Namespace + "/" + t.Name
		n.Deleted = t.GetCondition(xpv2.TypeSynced).Reason == common.ReasonDeletedInCloudflare
	}
	if n.Holder != "" {
		return n, nil
	}
	return replacedIn(ctx, kube, ns, n)
}

// replacedIn finds the AccessServiceToken of ns that made a token in
// place of n, deleted in Cloudflare; n as it is when none did.
func replacedIn(ctx context.Context, kube client.Reader, ns string, n Named) (Named, error) {
	l := &v1alpha1.AccessServiceTokenList{}
	if err := kube.List(ctx, l, client.InNamespace(ns)); err != nil {
		return Named{}, errors.Wrap(err, "cannot list AccessServiceTokens")
	}
	for _, t := range l.Items {
		if r := t.Status.AtProvider.Replaced; r != nil && r.PreviousID == n.ID {
			n.Holder, n.Deleted, n.ReplacedBy = t.Namespace+"/"+t.Name, true, meta.GetExternalName(&t)
		}
	}
	return n, nil
}

// Follow clears the service token ID of every rule whose serviceTokenRef
// names an AccessServiceToken that now holds another token (one made in
// place of a token deleted in Cloudflare), so reference resolution, which
// otherwise keeps an ID once resolved, sets the new one. A token without
// an ID yet is left as it is: the old ID names nothing that lets anyone
// in.
func Follow(ctx context.Context, kube client.Reader, ns string, lists ...[]v1alpha1.AccessRule) error {
	for _, l := range lists {
		for i := range l {
			r := &l[i]
			if r.ServiceTokenRef == nil || r.ServiceTokenID == nil {
				continue
			}
			key := types.NamespacedName{Namespace: r.ServiceTokenRef.Namespace, Name: r.ServiceTokenRef.Name}
			if key.Namespace == "" {
				key.Namespace = ns
			}
			t := &v1alpha1.AccessServiceToken{}
			err := kube.Get(ctx, key, t)
			if kerrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return errors.Wrap(err, "cannot get AccessServiceToken")
			}
			if id := meta.GetExternalName(t); id != "" && id != *r.ServiceTokenID {
				r.ServiceTokenID = nil
			}
		}
	}
	return nil
}
