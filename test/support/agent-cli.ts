import { spawn } from 'node:child_process';

export interface AgentCliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a coding agent's CLI (Codex, Claude Code) to its end with no stdin (agents read a piped stdin to its end
 * before they start) and only the environment given; killed after `timeoutMs`.
 */
export function runAgentCli(binary: string, args: string[], options: { env: Record<string, string>; cwd?: string; timeoutMs?: number }): Promise<AgentCliRun> {
  return new Promise((resolve) => {
    const child = spawn(binary, args, { env: options.env, ...(options.cwd === undefined ? {} : { cwd: options.cwd }), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 45_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, stdout, stderr });
    });
  });
}
