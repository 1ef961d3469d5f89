import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useApi } from '../../api/api-context';
import type { ConsoleProjectAnswerJson, ConsoleProjectListJson, ProjectMemberListJson } from '../../../../src/contract/index.js';
import type { ProjectInput, ProjectRole } from '../../api/types';
import { keysQueryKey } from '../keys/key-queries';

export const projectsQueryKey = ['projects'] as const;

export function useProjects(enabled = true) {
  const api = useApi();
  return useQuery({ queryKey: projectsQueryKey, queryFn: () => api.get<ConsoleProjectListJson>('/api/projects'), enabled });
}

export function useProject(id: string) {
  const api = useApi();
  return useQuery({ queryKey: [...projectsQueryKey, id], queryFn: () => api.get<ConsoleProjectAnswerJson>(`/api/projects/${encodeURIComponent(id)}`) });
}

export function useProjectMembers(id: string, enabled: boolean) {
  const api = useApi();
  return useQuery({ queryKey: [...projectsQueryKey, id, 'members'], queryFn: () => api.get<ProjectMemberListJson>(`/api/projects/${encodeURIComponent(id)}/members`), enabled });
}

/** Every project mutation refreshes the projects and the keys (a key's project and counts change with them). */
function useRefresh() {
  const queryClient = useQueryClient();
  return async () => {
    await queryClient.invalidateQueries({ queryKey: projectsQueryKey });
    await queryClient.invalidateQueries({ queryKey: keysQueryKey });
  };
}

export function useCreateProject() {
  const api = useApi();
  const refresh = useRefresh();
  return useMutation({ mutationFn: (input: Partial<ProjectInput>) => api.post<ConsoleProjectAnswerJson>('/api/projects', input), onSuccess: refresh });
}

export function useUpdateProject(id: string) {
  const api = useApi();
  const refresh = useRefresh();
  return useMutation({ mutationFn: (input: Partial<ProjectInput>) => api.patch<ConsoleProjectAnswerJson>(`/api/projects/${encodeURIComponent(id)}`, input), onSuccess: refresh });
}

export function useDeleteProject(id: string) {
  const api = useApi();
  const refresh = useRefresh();
  return useMutation({ mutationFn: () => api.delete(`/api/projects/${encodeURIComponent(id)}`), onSuccess: refresh });
}

export function useSetProjectMember(id: string) {
  const api = useApi();
  const refresh = useRefresh();
  return useMutation({
    mutationFn: ({ userId, role }: { userId: string; role: ProjectRole }) => api.put(`/api/projects/${encodeURIComponent(id)}/members/${encodeURIComponent(userId)}`, { role }),
    onSuccess: refresh,
  });
}

export function useRemoveProjectMember(id: string) {
  const api = useApi();
  const refresh = useRefresh();
  return useMutation({ mutationFn: (userId: string) => api.delete(`/api/projects/${encodeURIComponent(id)}/members/${encodeURIComponent(userId)}`), onSuccess: refresh });
}
