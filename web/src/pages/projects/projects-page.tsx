import { useState } from 'react';
import { Link } from 'react-router-dom';
import { useSession } from '../../api/api-context';
import { errorMessage } from '../../api/client';
import type { Project } from '../../api/types';
import { formatCost, formatInteger } from '../../format/format';
import { useDocumentTitle } from '../../layout/use-document-title';
import { Button } from '../../ui/button';
import { Dialog } from '../../ui/dialog';
import { Alert, Badge, Card, Loading, PageHeader } from '../../ui/feedback';
import { ProjectForm } from './project-form';
import { useOfferedGuardrails } from '../keys/key-queries';
import { useCreateProject, useProjects } from './project-queries';

/** Owners and admins make and change projects; everyone else reads those they may see. */
export function canManageProjects(role: string | null | undefined): boolean {
  return role === 'owner' || role === 'admin';
}

export function projectLimits(project: Project): string {
  const parts = [
    project.quota_usd == null ? null : `cap ${formatCost(project.quota_usd)}`,
    project.budget == null ? null : `${formatCost(project.budget.limit_usd)} per ${project.budget.period}`,
    project.rpm == null ? null : `${formatInteger(project.rpm)} RPM`,
    project.tpm == null ? null : `${formatInteger(project.tpm)} TPM`,
    project.allowed_models == null ? null : `${project.allowed_models.length} model${project.allowed_models.length === 1 ? '' : 's'}`,
  ].filter((part) => part !== null);
  return parts.length === 0 ? (project.default ? 'The account\'s limits' : 'No limits of its own') : parts.join(' · ');
}

export function ProjectsPage() {
  useDocumentTitle('Projects');
  const session = useSession();
  const projects = useProjects();
  const create = useCreateProject();
  const guardrails = useOfferedGuardrails();
  const [creating, setCreating] = useState(false);
  const manages = canManageProjects(session.data?.role);
  return (
    <div className="page stack">
      <PageHeader title="Projects" description="Group keys by team or product: each project has its own budget, limits, allowed models and members. Keys without a project are in the default project."
        actions={manages ? <Button variant="primary" onClick={() => { create.reset(); setCreating(true); }}>New project</Button> : null} />
      <Card title="Projects">
        {projects.isPending ? <Loading /> : projects.isError ? <Alert tone="error">{errorMessage(projects.error)}</Alert> : (
          <div className="table-scroll">
            <table className="table table-cards" data-testid="projects-table">
              <thead><tr><th scope="col">Project</th><th scope="col">State</th><th scope="col">Spend</th><th scope="col">Limits</th><th scope="col">Keys</th></tr></thead>
              <tbody>
                {projects.data.data.map((project) => (
                  <tr key={project.id}>
                    <th scope="row">
                      <Link to={`/projects/${encodeURIComponent(project.id)}`} className="key-name">{project.name}</Link>
                      {project.default ? <span className="key-meta">Keys without a project</span> : <span className="key-meta mono">{project.id}</span>}
                    </th>
                    <td data-label="State">{project.status === 'paused' ? <Badge tone="warning">paused</Badge> : <Badge tone="success">active</Badge>}</td>
                    <td data-label="Spend">
                      {formatCost(project.spent_usd)}
                      {project.budget == null ? null : <span className="key-meta">{formatCost(project.budget.spent_usd)} of {formatCost(project.budget.limit_usd)} this {project.budget.period}</span>}
                    </td>
                    <td data-label="Limits">
                      {projectLimits(project)}
                      {project.guardrails.length === 0 ? null : <span className="key-meta">Guardrails: {project.guardrails.join(', ')}</span>}
                    </td>
                    <td data-label="Keys">{formatInteger(project.key_count)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
      <Dialog open={creating} title="New project" onClose={() => setCreating(false)}>
        {creating ? (
          <ProjectForm initial={null} guardrails={guardrails.data?.data ?? []} submitLabel="Create project" busy={create.isPending} serverError={create.isError ? errorMessage(create.error) : null}
            onCancel={() => setCreating(false)}
            onSubmit={(input) => create.mutate(Object.fromEntries(Object.entries(input).filter(([, value]) => value !== null)), { onSuccess: () => setCreating(false) })} />
        ) : null}
      </Dialog>
    </div>
  );
}
