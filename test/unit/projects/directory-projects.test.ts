import { describe, expect, it } from 'vitest';
import type { Project, ProjectMember, ProjectRepository } from '../../../src/domain/project.js';
import { parseProjectGrant, syncDirectoryProjects } from '../../../src/projects/directory-projects.js';

describe('project grants in a role map', () => {
  it('reads project:<id or name>[:<role>], viewer when no role is named', () => {
    expect(parseProjectGrant('project:Search')).toEqual({ project: 'Search', role: 'viewer' });
    expect(parseProjectGrant('project:Search:developer')).toEqual({ project: 'Search', role: 'developer' });
    expect(parseProjectGrant('project:a:b:viewer')).toEqual({ project: 'a:b', role: 'viewer' });
    expect(parseProjectGrant('project:Team:lead')).toEqual({ project: 'Team:lead', role: 'viewer' });
    for (const value of ['developer', 'admin', 'project:', 'project: ', 'project:Search:', 'Project:Search']) expect(parseProjectGrant(value), value).toBeNull();
  });
});

function memoryProjects(projects: Project[]): ProjectRepository & { rows: ProjectMember[] } {
  const rows: ProjectMember[] = [];
  return {
    rows,
    create: async () => undefined,
    getById: async (id) => projects.find((project) => project.id === id) ?? null,
    getByIds: async (ids) => projects.filter((project) => ids.includes(project.id)),
    listByAccount: async (accountId) => projects.filter((project) => project.accountId === accountId),
    update: async () => null,
    delete: async () => false,
    keyIds: async () => [],
    members: async (projectId) => rows.filter((row) => row.projectId === projectId),
    membershipsOf: async (accountId, userId) => rows.filter((row) => row.accountId === accountId && row.userId === userId),
    setMember: async (member) => {
      const index = rows.findIndex((row) => row.projectId === member.projectId && row.userId === member.userId);
      if (index >= 0) rows.splice(index, 1, member); else rows.push(member);
    },
    removeMember: async (projectId, userId) => {
      const index = rows.findIndex((row) => row.projectId === projectId && row.userId === userId);
      if (index >= 0) rows.splice(index, 1);
      return index >= 0;
    },
  };
}

const project = (id: string, name: string, accountId = 'acct_1'): Project => ({
  id, accountId, name, quotaNano: null, spentNano: 0n, budget: null, rpm: null, tpm: null, allowedModels: null, createdAt: 0, updatedAt: 0,
});

describe('syncDirectoryProjects', () => {
  const roleMap = { search: 'project:Search:developer', readers: 'project:Search', ads: 'project:prj_ads', eng: 'developer' };

  it('gives the highest role of the groups held, keeps projects the map does not name, and never reaches another account', async () => {
    const repo = memoryProjects([project('prj_search', 'Search'), project('prj_ads', 'Search'), project('prj_other', 'Other'), project('prj_x', 'Search', 'acct_2')]);
    await repo.setMember({ projectId: 'prj_other', accountId: 'acct_1', userId: 'u', role: 'viewer', createdAt: 1 });
    await syncDirectoryProjects(repo, 'acct_1', 'u', ['readers', 'search', 'eng'], roleMap, 5);
    expect(new Map(repo.rows.map((row) => [row.projectId, row.role]))).toEqual(new Map([['prj_other', 'viewer'], ['prj_search', 'developer']]));
    // By id: prj_ads, although its name is also Search (a name reaches the oldest project of that name).
    await syncDirectoryProjects(repo, 'acct_1', 'u', ['readers', 'ads'], roleMap, 6);
    expect(new Map(repo.rows.map((row) => [row.projectId, row.role]))).toEqual(new Map([['prj_other', 'viewer'], ['prj_search', 'viewer'], ['prj_ads', 'viewer']]));
    await syncDirectoryProjects(repo, 'acct_1', 'u', null, roleMap, 7);
    expect(repo.rows.map((row) => row.projectId)).toEqual(['prj_other']);
  });
});
