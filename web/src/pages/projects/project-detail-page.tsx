import { useState, type FormEvent } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from 'react-router-dom';
import { useApi, useSession } from '../../api/api-context';
import { errorMessage } from '../../api/client';
import type { Members } from '../../api/money-types';
import type { Project, ProjectRole } from '../../api/types';
import { formatCost, formatDate, formatDateTime } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Alert, Badge, Card, Loading, PageHeader } from '../../ui/feedback';
import { SelectField } from '../../ui/field';
import { useKeys, useOfferedGuardrails } from '../keys/key-queries';
import { KeyStatusBadge } from '../keys/key-status';
import { ProjectForm } from './project-form';
import { useDeleteProject, useProject, useProjectMembers, useRemoveProjectMember, useSetProjectMember, useUpdateProject } from './project-queries';
import { canManageProjects, projectLimits } from './projects-page';

const PROJECT_ROLE_TEXT: Record<ProjectRole, string> = {
  developer: 'Developer — makes and changes this project\'s keys, reads its usage',
  viewer: 'Viewer — reads this project\'s keys and usage',
};

function Budget({ project }: { project: Project }) {
  return (
    <dl className="stat-strip" data-testid="project-budget">
      <div className="stat">
        <dt>Spent in total</dt>
        <dd>{formatCost(project.spent_usd)}<span className="stat-note">{project.quota_usd == null ? 'No quota cap' : `of a ${formatCost(project.quota_usd)} cap`}</span></dd>
      </div>
      {project.budget == null ? null : (
        <div className="stat">
          <dt>This {project.budget.period}</dt>
          <dd>{formatCost(project.budget.spent_usd)}<span className="stat-note">of {formatCost(project.budget.limit_usd)} · resets {formatDateTime(project.budget.resets_at)}</span></dd>
        </div>
      )}
      <div className="stat">
        <dt>Limits</dt>
        <dd className="stat-small">{projectLimits(project)}<span className="stat-note">{formatCost(project.held_usd)} held by requests in flight</span></dd>
      </div>
      {project.guardrails.length === 0 ? null : (
        <div className="stat">
          <dt>Guardrails</dt>
          <dd className="stat-small"><span className="mono wrap-anywhere">{project.guardrails.join(', ')}</span><span className="stat-note">with the account's, each key's and the model's</span></dd>
        </div>
      )}
    </dl>
  );
}

function MembersCard({ project }: { project: Project }) {
  const api = useApi();
  const members = useProjectMembers(project.id, true);
  const accountMembers = useQuery({ queryKey: ['members'], queryFn: () => api.get<Members>('/api/members') });
  const setMember = useSetProjectMember(project.id);
  const removeMember = useRemoveProjectMember(project.id);
  const [userId, setUserId] = useState('');
  const [role, setRole] = useState<ProjectRole>('viewer');
  // Owners and admins see every project: project roles go to the other members.
  const candidates = (accountMembers.data?.data ?? []).filter((member) => member.role !== 'owner' && member.role !== 'admin' && !(members.data?.data ?? []).some((existing) => existing.user_id === member.user_id));
  const add = (event: FormEvent) => {
    event.preventDefault();
    if (userId !== '') setMember.mutate({ userId, role }, { onSuccess: () => setUserId('') });
  };
  const failure = setMember.error ?? removeMember.error;
  return (
    <Card title="Members">
      <p className="field-hint">A member with a project role sees only the projects they are in: their keys and usage, nothing of billing or the other projects.</p>
      {failure == null ? null : <Alert tone="error">{errorMessage(failure)}</Alert>}
      {members.isPending ? <Loading /> : members.isError ? <Alert tone="error">{errorMessage(members.error)}</Alert> : members.data.data.length === 0 ? <p>No members yet: owners and admins see it.</p> : (
        <div className="table-scroll">
          <table className="table table-cards" data-testid="project-members-table">
            <thead><tr><th scope="col">Email</th><th scope="col">Project role</th><th scope="col">Since</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
            <tbody>
              {members.data.data.map((member) => (
                <tr key={member.user_id}>
                  <th scope="row">{member.email ?? member.user_id}</th>
                  <td data-label="Project role">
                    <select aria-label={`Project role of ${member.email ?? member.user_id}`} value={member.role} onChange={(event) => setMember.mutate({ userId: member.user_id, role: event.target.value as ProjectRole })}>
                      <option value="developer">developer</option><option value="viewer">viewer</option>
                    </select>
                  </td>
                  <td data-label="Since">{formatDate(member.created_at)}</td>
                  <td className="cell-actions"><Button variant="danger" onClick={() => removeMember.mutate(member.user_id)}>Remove<span className="visually-hidden"> {member.email}</span></Button></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <form className="inline-form" onSubmit={add} noValidate>
        <SelectField label="Member" name="project-member" value={userId} onChange={(event) => setUserId(event.target.value)}
          options={[{ value: '', label: candidates.length === 0 ? 'No other member to add' : 'Choose a member' }, ...candidates.map((member) => ({ value: member.user_id, label: `${member.email} (${member.role})` }))]} />
        <SelectField label="Project role" name="project-role" value={role} onChange={(event) => setRole(event.target.value as ProjectRole)}
          options={[{ value: 'viewer', label: 'Viewer' }, { value: 'developer', label: 'Developer' }]} />
        <Button type="submit" variant="primary" busy={setMember.isPending} disabled={userId === ''}>Add to project</Button>
      </form>
      <ul className="role-list">{(Object.keys(PROJECT_ROLE_TEXT) as ProjectRole[]).map((option) => <li key={option}>{PROJECT_ROLE_TEXT[option]}</li>)}</ul>
    </Card>
  );
}

export function ProjectDetailPage() {
  const { id = '' } = useParams();
  const session = useSession();
  const navigate = useNavigate();
  const project = useProject(id);
  const keys = useKeys();
  const update = useUpdateProject(id);
  const remove = useDeleteProject(id);
  const guardrails = useOfferedGuardrails();
  const [saved, setSaved] = useState(false);
  useDocumentTitle(project.data?.project.name ?? 'Project');
  const manages = canManageProjects(session.data?.role);
  if (project.isPending) return <Loading />;
  if (project.isError) return <div className="page"><Alert tone="error">{errorMessage(project.error)}</Alert></div>;
  const current = project.data.project;
  const projectKeys = (keys.data?.data ?? []).filter((key) => (key.project_id ?? 'default') === current.id && key.status !== 'revoked');
  return (
    <div className="page stack">
      <PageHeader title={current.name} description={current.default ? 'Keys without a project. It has no limits of its own: the account\'s apply.' : <>Project <span className="mono">{current.id}</span> · created {formatDate(current.created_at)}</>}
        actions={<Link to="/projects" className="button button-ghost">All projects</Link>} />
      <Card title="Budget and limits" actions={current.status === 'paused' ? <Badge tone="warning">paused: nothing left</Badge> : <Badge tone="success">active</Badge>}>
        <Budget project={current} />
        {manages && !current.default ? (
          <>
            {saved && update.isSuccess ? <Alert tone="success">Saved. Every instance applies it to the next request.</Alert> : null}
            <ProjectForm key={current.updated_at ?? ''} initial={current} guardrails={guardrails.data?.data ?? []} submitLabel="Save changes" busy={update.isPending} serverError={update.isError ? errorMessage(update.error) : null}
              onSubmit={(input) => { setSaved(true); update.mutate(input); }} />
          </>
        ) : null}
      </Card>
      <Card title="Keys" actions={<Link to="/keys" className="button button-ghost">Manage keys</Link>}>
        {keys.isPending ? <Loading /> : projectKeys.length === 0 ? <p>No keys in this project yet. Create one on the keys page and choose this project.</p> : (
          <div className="table-scroll">
            <table className="table table-cards" data-testid="project-keys-table">
              <thead><tr><th scope="col">Name</th><th scope="col">State</th><th scope="col">Spent</th></tr></thead>
              <tbody>
                {projectKeys.map((key) => (
                  <tr key={key.id}>
                    <th scope="row"><span className="key-name">{key.name}</span><span className="key-meta mono">{key.hint}</span></th>
                    <td data-label="State"><KeyStatusBadge apiKey={key} /></td>
                    <td data-label="Spent">{formatCost(key.spent_usd)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
      {manages && !current.default ? <MembersCard project={current} /> : null}
      {manages && !current.default ? (
        <Card title="Delete project">
          <p className="field-hint">Only a project without live keys can be deleted: revoke its keys or move them to another project first.</p>
          {remove.isError ? <Alert tone="error">{errorMessage(remove.error)}</Alert> : null}
          <div className="form-actions"><Button variant="danger" busy={remove.isPending} onClick={() => remove.mutate(undefined, { onSuccess: () => navigate('/projects') })}>Delete project</Button></div>
        </Card>
      ) : null}
    </div>
  );
}
