import { useState } from 'preact/hooks';
import type { FnOutput } from '../../../src/sdk/types.ts';
import { fn, isManager, type Org, type User } from '../api.ts';
import { Table } from '../table.tsx';
import { ConfirmButton, ErrorNote, fmtDate, Page, useLoad } from '../ui.tsx';

// Members of the current organization. Owners and admins invite, change roles and remove; members see
// the list only. The server keeps the last owner; the page explains its refusal.

type Member = FnOutput<'listMembersForCli'>[number];
type Invited = FnOutput<'inviteMemberForCli'>;

export function MembersPage(props: { org: Org; user: User }) {
  const { data, error, reload } = useLoad(
    () => fn<Member[]>('listMembersForCli', { orgSlug: props.org.slug }),
    [props.org.slug],
  );
  const [actionError, setActionError] = useState<unknown>(null);
  const manager = isManager(props.org);
  // Least privilege first: it is the invitation form's default.
  const roles: Org['role'][] =
    props.org.role === 'owner' ? ['member', 'admin', 'owner'] : ['member', 'admin'];
  // Only owners touch owners.
  const mayTouch = (m: Member) => manager && (props.org.role === 'owner' || m.role !== 'owner');
  const act = async (f: () => Promise<unknown>) => {
    setActionError(null);
    try {
      await f();
      reload();
    } catch (e) {
      setActionError(e);
    }
  };
  return (
    <Page title="Members" intro={`People in ${props.org.name}.`}>
      {!manager ? <p class="notice">Only owners and admins can invite or change members.</p> : null}
      <ErrorNote error={error} />
      <ErrorNote error={actionError} />
      {data ? (
        <Table
          label="Members"
          rows={data}
          rowKey={(m) => m.userId}
          rowTestId={(m) => `member-${m.email}`}
          columns={[
            {
              key: 'email',
              header: 'E-mail',
              cell: (m) => (
                <>
                  {m.email}
                  {m.userId === props.user.id ? <span class="badge">you</span> : null}
                  {m.pending ? <span class="badge">invited</span> : null}
                </>
              ),
            },
            {
              key: 'role',
              header: 'Role',
              cell: (m) =>
                mayTouch(m) ? (
                  <label>
                    <span class="sr-only">Role of {m.email}</span>
                    <select
                      value={m.role}
                      onChange={(e) =>
                        act(() =>
                          fn('setMemberRoleForCli', {
                            orgSlug: props.org.slug,
                            userId: m.userId,
                            role: (e.target as HTMLSelectElement).value,
                          }),
                        )
                      }
                    >
                      {(roles.includes(m.role) ? roles : [m.role, ...roles]).map((r) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                    </select>
                  </label>
                ) : (
                  m.role
                ),
            },
            { key: 'joined', header: 'Joined', cell: (m) => fmtDate(m.joinedAt) },
            ...(manager
              ? [
                  {
                    key: 'actions',
                    header: 'Actions',
                    cell: (m: Member) =>
                      mayTouch(m) ? (
                        <ConfirmButton
                          label="Remove"
                          confirm={`Remove ${m.email}?`}
                          onConfirm={() =>
                            act(() => fn('removeMemberForCli', { orgSlug: props.org.slug, userId: m.userId }))
                          }
                        />
                      ) : null,
                  },
                ]
              : []),
          ]}
        />
      ) : null}
      {manager ? <Invite org={props.org} roles={roles} onInvited={reload} /> : null}
    </Page>
  );
}

function Invite(props: { org: Org; roles: Org['role'][]; onInvited: () => void }) {
  const [error, setError] = useState<unknown>(null);
  const [invited, setInvited] = useState<Invited | null>(null);
  return (
    <form
      class="card inline-form"
      aria-label="Invite a member"
      onSubmit={async (e) => {
        e.preventDefault();
        const form = e.currentTarget as HTMLFormElement;
        const f = new FormData(form);
        setError(null);
        try {
          const r = await fn<Invited>('inviteMemberForCli', {
            orgSlug: props.org.slug,
            email: String(f.get('email')),
            role: String(f.get('role')),
          });
          setInvited(r);
          form.reset();
          props.onInvited();
        } catch (err) {
          setError(err);
        }
      }}
    >
      <h2>Invite by e-mail</h2>
      <label>
        E-mail
        <input name="email" type="email" required />
      </label>
      <label>
        Role
        <select name="role">
          {props.roles.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
      </label>
      <button type="submit">Invite</button>
      <ErrorNote error={error} />
      {invited ? (
        <div role="status" class="invited">
          {invited.alreadyMember ? (
            <p>{invited.email} is already a member.</p>
          ) : (
            <p>Added {invited.email}.</p>
          )}
          {invited.pending ? (
            <p data-testid="invite-pending">
              We e-mailed them an invitation. They join once they have verified their address (the mail has a
              link to set a password).
            </p>
          ) : (
            <p>We e-mailed them; they see the organization when they sign in.</p>
          )}
        </div>
      ) : null}
    </form>
  );
}
