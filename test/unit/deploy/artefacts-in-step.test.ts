import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, parseAllDocuments, stringify as stringifyYaml } from 'yaml';
import { loadConfig } from '../../../src/config/load-config.js';
import { API_ROUTES } from '../../../src/http/routes/api-routes.js';

// The deployment artefacts (Dockerfile, deploy/compose.yaml, deploy/nginx, deploy/helm) cannot be built or run
// here (no container engine), so this file checks that they stay in step with the code: every environment
// variable they set is one the configuration loader reads, their ports are its defaults, their probe paths are
// routes of the listener they probe, and they start the package's `serve` command.

const root = path.resolve(import.meta.dirname, '../../..');
const read = (relative: string): string => readFileSync(path.join(root, relative), 'utf8');

/** Every name loadConfig reads, observed by running it over an environment that records each lookup. */
function namesTheLoaderReads(): Set<string> {
  const seen = new Set<string>();
  const environment = new Proxy({} as Record<string, string | undefined>, {
    get(_target, key) {
      if (typeof key === 'string') seen.add(key.startsWith('UNIGATE_') ? key.slice('UNIGATE_'.length) : key);
      return undefined;
    },
  });
  const directory = mkdtempSync(path.join(tmpdir(), 'unigate-deploy-'));
  try {
    loadConfig(environment, directory);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  // Provider base URLs are looked up only when the provider's key is set.
  for (const provider of ['OPENAI', 'ANTHROPIC', 'GEMINI']) if (seen.has(`${provider}_API_KEY`)) seen.add(`${provider}_BASE_URL`);
  return seen;
}

const envNames = namesTheLoaderReads();
/** Variables of the C runtime's memory allocator (docs/operators.md, "Memory"). */
const ALLOCATOR_VARIABLES = ['LD_PRELOAD', 'MALLOC_CONF'];
const defaults = loadConfig({}, tmpdir());

function expectEnvNamesRead(names: Iterable<string>, where: string): void {
  const unknown = [...names].filter((name) => !envNames.has(name));
  expect(unknown, `${where} sets variables the gateway never reads`).toEqual([]);
}

function expectApiRoute(routePath: string): void {
  const served = API_ROUTES.some((route) => route.method === 'GET' && route.path === routePath);
  expect(served, `API listener has no GET ${routePath}`).toBe(true);
}

describe('the serve command', () => {
  it('is the package bin and a command of the command line', () => {
    const manifest = JSON.parse(read('package.json')) as { bin: Record<string, string>; scripts: Record<string, string> };
    expect(manifest.bin['unigate']).toBe('bin/unigate.js');
    expect(manifest.scripts['start']).toBe('node bin/unigate.js serve');
    expect(read('src/cli.ts')).toContain("case 'serve':");
  });
});

describe('Dockerfile', () => {
  interface Instruction { keyword: string; args: string }
  const instructions: Instruction[] = read('Dockerfile')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [keyword = '', ...rest] = line.split(/\s+/);
      return { keyword: keyword.toUpperCase(), args: rest.join(' ') };
    });
  const stageStarts = instructions.flatMap((instruction, index) => (instruction.keyword === 'FROM' ? [index] : []));
  const runtime = instructions.slice(stageStarts.at(-1));
  const build = instructions.slice(0, stageStarts.at(-1));
  const runtimeOf = (keyword: string) => runtime.filter((instruction) => instruction.keyword === keyword);

  it('builds in one stage with a single npm ci, and prunes to production dependencies', () => {
    expect(stageStarts.length).toBeGreaterThanOrEqual(2);
    const installs = instructions.filter((instruction) => /\bnpm ci\b/.test(instruction.args));
    expect(installs).toHaveLength(1);
    expect(build).toContain(installs[0]);
    expect(build.some((instruction) => /npm prune --omit=dev/.test(instruction.args))).toBe(true);
    const copies = runtimeOf('COPY').map((instruction) => instruction.args);
    expect(copies.every((args) => args.includes('--from=build')), 'the runtime stage copies only build output').toBe(true);
    expect(copies.some((args) => /\/app\/node_modules/.test(args))).toBe(true);
    expect(copies.some((args) => /\/app\/dist/.test(args))).toBe(true);
    expect(copies.some((args) => /\/app\/src\b/.test(args)), 'no TypeScript sources in the runtime image').toBe(false);
  });

  it('keeps every package the gateway imports at run time: each is a production dependency', () => {
    const manifest = JSON.parse(read('package.json')) as { dependencies: Record<string, string> };
    const imported = new Set<string>();
    const sources = (directory: string): string[] => readdirSync(path.join(root, directory), { withFileTypes: true }).flatMap((entry) => {
      const relative = path.join(directory, entry.name);
      if (entry.isDirectory()) return sources(relative);
      return entry.name.endsWith('.ts') ? [relative] : [];
    });
    for (const file of [...sources('src'), 'bin/unigate.js']) {
      const text = read(file);
      const specifiers = [
        ...text.matchAll(/^(?:import|export)\s+(?!type\b)[^;]*?\bfrom\s+'([^']+)'/gms),
        ...text.matchAll(/^import\s+'([^']+)'/gm),
        ...text.matchAll(/\bimport\('([^']+)'\)/g),
      ].map((match) => match[1]!);
      for (const specifier of specifiers) {
        if (specifier.startsWith('.') || specifier.startsWith('node:')) continue;
        imported.add(/^(@[^/]+\/[^/]+|[^/]+)/.exec(specifier)![1]!);
      }
    }
    expect(imported.size).toBeGreaterThan(5);
    const missing = [...imported].filter((name) => manifest.dependencies[name] === undefined);
    expect(missing, 'imported by the gateway but removed by npm prune --omit=dev').toEqual([]);
  });

  it('runs as a non-root user and stops on SIGTERM', () => {
    const users = runtimeOf('USER');
    expect(users).toHaveLength(1);
    expect(users[0]!.args).not.toMatch(/^(root|0)(:|$)/);
    expect(runtimeOf('STOPSIGNAL').map((instruction) => instruction.args)).toEqual(['SIGTERM']);
  });

  it('exposes the default API and console ports and checks /healthz on the API port', () => {
    const exposed = runtimeOf('EXPOSE').flatMap((instruction) => instruction.args.split(/\s+/)).map(Number);
    expect(exposed.sort()).toEqual([defaults.port, defaults.consolePort].sort());
    const [healthcheck] = runtimeOf('HEALTHCHECK');
    expect(healthcheck?.args).toContain('/healthz');
    expect(healthcheck?.args).toContain(`process.env.PORT||${defaults.port}`);
    expectApiRoute('/healthz');
  });

  it('sets only variables the gateway reads, with the default ports', () => {
    const env = new Map<string, string>();
    for (const instruction of runtimeOf('ENV')) {
      for (const match of instruction.args.matchAll(/([A-Z_][A-Z0-9_]*)=(\S+)/g)) env.set(match[1]!, match[2]!);
    }
    // The memory allocator's variables are read by the dynamic linker and the allocator, not by the gateway.
    expectEnvNamesRead([...env.keys()].filter((name) => !ALLOCATOR_VARIABLES.includes(name)), 'Dockerfile ENV');
    expect(env.get('PORT')).toBe(String(defaults.port));
    expect(env.get('CONSOLE_PORT')).toBe(String(defaults.consolePort));
    expect(env.get('HOST')).toBe('0.0.0.0');
  });

  it('preloads jemalloc from a package the runtime stage installs, returning freed pages from its own thread', () => {
    const env = new Map<string, string>();
    for (const instruction of runtimeOf('ENV')) {
      for (const match of instruction.args.matchAll(/([A-Z_][A-Z0-9_]*)=(\S+)/g)) env.set(match[1]!, match[2]!);
    }
    expect(env.get('LD_PRELOAD')).toBe('libjemalloc.so.2');
    expect(runtimeOf('RUN').some((instruction) => /apt-get install\b.*\blibjemalloc2\b/.test(instruction.args))).toBe(true);
    const options = new Map((env.get('MALLOC_CONF') ?? '').split(',').map((option) => option.split(':') as [string, string]));
    expect(options.get('background_thread')).toBe('true');
    expect(Number(options.get('dirty_decay_ms'))).toBeLessThanOrEqual(1000);
  });

  it('starts the package bin with serve', () => {
    expect(JSON.parse(runtimeOf('ENTRYPOINT')[0]!.args)).toEqual(['node', 'bin/unigate.js']);
    expect(JSON.parse(runtimeOf('CMD')[0]!.args)).toEqual(['serve']);
  });

  it('has a .dockerignore that keeps local builds and secrets out, but not what the build copies', () => {
    const ignored = read('.dockerignore').split('\n').map((line) => line.trim()).filter((line) => line && !line.startsWith('#'));
    for (const entry of ['node_modules', 'dist', '.git', '.env', 'data']) expect(ignored).toContain(entry);
    const copiedSources = build
      .filter((instruction) => instruction.keyword === 'COPY' && !instruction.args.includes('--from'))
      .flatMap((instruction) => instruction.args.split(/\s+/).slice(0, -1));
    for (const source of copiedSources) {
      expect(existsSync(path.join(root, source)), `${source} exists`).toBe(true);
      const excluded = ignored.some((entry) => entry === source || source.startsWith(`${entry}/`));
      const reincluded = ignored.includes(`!${source}`);
      expect(!excluded || reincluded, `${source} is copied by the build but ignored`).toBe(true);
    }
  });
});

interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string | number | null>;
  ports?: string[];
  volumes?: string[];
  depends_on?: unknown;
}

const compose = parseYaml(read('deploy/compose.yaml'), { merge: true }) as { services: Record<string, ComposeService> };
const gatewayNames = Object.keys(compose.services).filter((name) => /^gateway-\d+$/.test(name));

describe('deploy/compose.yaml', () => {
  it('runs three gateway containers on one PostgreSQL and one Redis, behind nginx', () => {
    expect(gatewayNames).toEqual(['gateway-1', 'gateway-2', 'gateway-3']);
    const images = Object.values(compose.services).map((service) => service.image ?? '');
    expect(images.filter((image) => image.startsWith('postgres:'))).toHaveLength(1);
    expect(images.filter((image) => image.startsWith('redis:'))).toHaveLength(1);
    expect(images.filter((image) => image.startsWith('nginx:'))).toHaveLength(1);
    const instanceIds = new Set(gatewayNames.map((name) => compose.services[name]!.environment?.['INSTANCE_ID']));
    expect(instanceIds.size).toBe(3);
  });

  it('gives every gateway only variables the gateway reads, the default ports and the serve command', () => {
    for (const name of gatewayNames) {
      const service = compose.services[name]!;
      expect(service.build, `${name} builds the Dockerfile`).toMatchObject({ dockerfile: 'Dockerfile' });
      expect(service.command).toEqual(['serve']);
      const environment = service.environment ?? {};
      expectEnvNamesRead(Object.keys(environment), `compose service ${name}`);
      expect(String(environment['PORT'])).toBe(String(defaults.port));
      expect(String(environment['CONSOLE_PORT'])).toBe(String(defaults.consolePort));
      expect(String(environment['DATABASE_URL'])).toMatch(/^postgres:\/\/[^@]+@postgres:5432\//);
      expect(String(environment['REDIS_URL'])).toBe('redis://redis:6379');
      // The shared secrets come from the operator's environment, never from the file.
      expect(String(environment['SECRET_KEY'])).toMatch(/^\$\{SECRET_KEY:\?/);
      expect(String(environment['ADMIN_TOKEN'])).toMatch(/^\$\{ADMIN_TOKEN:\?/);
      // The loader must accept the file's fixed values as they are.
      const concrete = Object.fromEntries(
        Object.entries(environment).filter(([, value]) => !String(value).startsWith('${')).map(([key, value]) => [key, String(value)]),
      );
      expect(() => loadConfig(concrete, tmpdir())).not.toThrow();
    }
  });

  it('mounts the nginx configuration from deploy/nginx', () => {
    const nginx = Object.values(compose.services).find((service) => service.image?.startsWith('nginx:'))!;
    const mount = nginx.volumes?.find((volume) => volume.includes('/etc/nginx/'));
    expect(mount).toBe('./nginx/unigate.conf:/etc/nginx/conf.d/default.conf:ro');
    expect(existsSync(path.join(root, 'deploy/nginx/unigate.conf'))).toBe(true);
    expect(nginx.ports).toEqual([`${defaults.port}:${defaults.port}`, `${defaults.consolePort}:${defaults.consolePort}`]);
  });
});

describe('deploy/nginx/unigate.conf', () => {
  const nginxConfig = read('deploy/nginx/unigate.conf').replace(/#.*$/gm, '');
  const upstream = (name: string): string[] => {
    const block = new RegExp(`upstream ${name} \\{([^}]*)\\}`).exec(nginxConfig)?.[1] ?? '';
    return [...block.matchAll(/^\s*server\s+(\S+)/gm)].map((match) => match[1]!);
  };

  it('balances every gateway container on the API and console ports', () => {
    expect(upstream('unigate_api')).toEqual(gatewayNames.map((name) => `${name}:${defaults.port}`));
    expect(upstream('unigate_console')).toEqual(gatewayNames.map((name) => `${name}:${defaults.consolePort}`));
    const listens = [...nginxConfig.matchAll(/^\s*listen\s+(\d+);/gm)].map((match) => Number(match[1]));
    expect(listens).toEqual([defaults.port, defaults.consolePort]);
  });

  it('passes streams through unbuffered and never replays a request already sent', () => {
    expect(nginxConfig).toMatch(/proxy_buffering off;/);
    expect(nginxConfig).not.toMatch(/non_idempotent/);
  });

  it('closes an idle connection to a stopping instance before the instance does, so none is cut under a request', () => {
    const idleSeconds = [...nginxConfig.matchAll(/keepalive_timeout\s+(\d+)s;/g)].map((match) => Number(match[1]));
    expect(idleSeconds).toHaveLength(2);
    for (const name of gatewayNames) {
      const drain = Number(compose.services[name]!.environment?.['DRAIN_SECONDS'] ?? 0);
      for (const seconds of idleSeconds) expect(seconds, name).toBeLessThan(drain);
    }
  });

  const nginx = spawnSync('nginx', ['-v'], { encoding: 'utf8' });
  const haveNginx = nginx.error === undefined && nginx.status === 0;
  if (!haveNginx) console.warn('nginx is not installed (Debian: apt-get install nginx-core): skipping `nginx -t` of deploy/nginx/unigate.conf');

  const scratch = mkdtempSync(path.join(tmpdir(), 'unigate-nginx-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it.skipIf(!haveNginx)('is accepted by nginx -t', () => {
    // The compose service names resolve only inside the compose network: nginx -t resolves upstream hosts, so
    // the copy under test points them at 127.0.0.1. Nothing else is changed.
    const local = read('deploy/nginx/unigate.conf').replace(/\bgateway-\d+:/g, '127.0.0.1:');
    writeFileSync(path.join(scratch, 'unigate.conf'), local);
    writeFileSync(
      path.join(scratch, 'nginx.conf'),
      `pid ${scratch}/nginx.pid;\nerror_log ${scratch}/error.log;\nevents {}\nhttp {\n  access_log off;\n  include ${scratch}/unigate.conf;\n}\n`,
    );
    const result = spawnSync('nginx', ['-t', '-p', scratch, '-c', path.join(scratch, 'nginx.conf'), '-e', path.join(scratch, 'error.log')], {
      encoding: 'utf8',
      timeout: 10_000,
    });
    expect(result.stderr).toContain('test is successful');
    expect(result.status).toBe(0);
  });
});

/**
 * Renders the chart's templates with exactly the Helm constructs they use: `.Values.a.b`, `.Release.Name`,
 * `.Chart.Name`, `x | quote`, `toYaml x | nindent n`, and `if x` / `if not x` … `end` blocks (with `{{-`
 * trimming the preceding whitespace as Helm does). Any other expression throws, so a template that grows past
 * this renderer fails here instead of being checked wrongly.
 */
function renderTemplate(template: string, values: Record<string, unknown>, chart: { name: string }): string {
  const context: Record<string, unknown> = { Values: values, Release: { Name: 'unigate' }, Chart: { Name: chart.name } };
  const lookup = (reference: string): unknown => {
    if (!reference.startsWith('.')) throw new Error(`unsupported template value "${reference}"`);
    let value: unknown = context;
    for (const part of reference.slice(1).split('.')) value = (value as Record<string, unknown> | undefined)?.[part];
    return value;
  };
  const toYamlIndented = (value: unknown, indent: number): string => {
    const lines = stringifyYaml(value).trimEnd().split('\n');
    return '\n' + lines.map((line) => ' '.repeat(indent) + line).join('\n');
  };
  const evaluate = (expression: string): string => {
    let match = /^toYaml (\S+) \| nindent (\d+)$/.exec(expression);
    if (match) return toYamlIndented(lookup(match[1]!), Number(match[2]));
    match = /^(\S+) \| quote$/.exec(expression);
    if (match) return JSON.stringify(String(lookup(match[1]!) ?? ''));
    match = /^(\.\S+)$/.exec(expression);
    if (match) {
      const value = lookup(match[1]!);
      if (value === undefined || typeof value === 'object') throw new Error(`template value ${expression} is not a scalar`);
      return String(value);
    }
    throw new Error(`unsupported template expression "${expression}"`);
  };

  const tokens = template.split(/(\s*\{\{-?\s*.*?\s*-?\}\})/s);
  const output: string[] = [];
  const active: boolean[] = [];
  for (const token of tokens) {
    const action = /^(\s*)\{\{(-?)\s*(.*?)\s*-?\}\}$/s.exec(token);
    if (!action) {
      if (active.every(Boolean)) output.push(token);
      continue;
    }
    const [, leading = '', trim, expression = ''] = action;
    const condition = /^if (not )?(\.\S+)$/.exec(expression);
    if (condition) {
      active.push(Boolean(lookup(condition[2]!)) !== Boolean(condition[1]));
      continue;
    }
    if (expression === 'end') {
      if (active.pop() === undefined) throw new Error('unbalanced end');
      continue;
    }
    if (active.every(Boolean)) output.push((trim === '-' ? '' : leading) + evaluate(expression));
  }
  if (active.length !== 0) throw new Error('unclosed if');
  return output.join('').replace(/^\n/, '');
}

interface Manifest {
  kind: string;
  metadata: { name: string };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

function renderChart(overrides: (values: Record<string, unknown>) => void): Manifest[] {
  const chartDirectory = path.join(root, 'deploy/helm/unigate');
  const chart = parseYaml(readFileSync(path.join(chartDirectory, 'Chart.yaml'), 'utf8')) as { name: string };
  const values = parseYaml(readFileSync(path.join(chartDirectory, 'values.yaml'), 'utf8')) as Record<string, unknown>;
  overrides(values);
  const manifests: Manifest[] = [];
  for (const file of readdirSync(path.join(chartDirectory, 'templates')).filter((name) => name.endsWith('.yaml')).sort()) {
    const rendered = renderTemplate(readFileSync(path.join(chartDirectory, 'templates', file), 'utf8'), values, chart);
    for (const document of parseAllDocuments(rendered)) {
      expect(document.errors, `${file} renders to valid YAML`).toEqual([]);
      const manifest = document.toJS() as Manifest | null;
      if (manifest !== null) manifests.push(manifest);
    }
  }
  return manifests;
}

interface Container {
  args: string[];
  ports: { name: string; containerPort: number }[];
  env: { name: string }[];
  envFrom: ({ configMapRef: { name: string } } | { secretRef: { name: string } })[];
  readinessProbe: { httpGet: { path: string; port: string }; periodSeconds: number };
  livenessProbe: { httpGet: { path: string; port: string } };
  lifecycle: { preStop: { exec: { command: string[] } } };
}

describe('deploy/helm/unigate', () => {
  const manifests = renderChart(() => {});
  const byKind = (kind: string) => manifests.filter((manifest) => manifest.kind === kind);
  const deployment = byKind('Deployment')[0]!;
  const podSpec = (deployment.spec as { template: { spec: { containers: Container[]; terminationGracePeriodSeconds: number } } }).template.spec;
  const container = podSpec.containers[0]!;
  const configMap = byKind('ConfigMap')[0]!;
  const secret = byKind('Secret')[0]!;

  it('renders every resource of a fleet', () => {
    expect(manifests.map((manifest) => manifest.kind).sort()).toEqual(
      ['ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'PodDisruptionBudget', 'Secret', 'Service'].sort(),
    );
  });

  it('sets only variables the gateway reads, the secrets through a Secret', () => {
    expect(Object.keys(secret.stringData ?? {}).sort()).toEqual(['ADMIN_TOKEN', 'DATABASE_URL', 'REDIS_URL', 'SECRET_KEY']);
    const names = [...Object.keys(configMap.data ?? {}), ...Object.keys(secret.stringData ?? {}), ...container.env.map((entry) => entry.name)];
    expectEnvNamesRead(names, 'the Helm chart');
    expect(container.envFrom).toEqual([{ configMapRef: { name: configMap.metadata.name } }, { secretRef: { name: secret.metadata.name } }]);
    expect(() => loadConfig(configMap.data ?? {}, tmpdir())).not.toThrow();
  });

  it('listens on the default ports and starts serve', () => {
    expect(container.args).toEqual(['serve']);
    const ports = Object.fromEntries(container.ports.map((port) => [port.name, port.containerPort]));
    expect(ports).toEqual({ api: defaults.port, console: defaults.consolePort });
    expect(configMap.data?.['PORT']).toBe(String(defaults.port));
    expect(configMap.data?.['CONSOLE_PORT']).toBe(String(defaults.consolePort));
    const service = byKind('Service')[0]!;
    expect((service.spec as { ports: { name: string; port: number; targetPort: string }[] }).ports).toEqual([
      { name: 'api', port: defaults.port, targetPort: 'api' },
      { name: 'console', port: defaults.consolePort, targetPort: 'console' },
    ]);
  });

  it('probes readiness on /readyz and liveness on /healthz of the API listener', () => {
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'api' });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'api' });
    expectApiRoute('/readyz');
    expectApiRoute('/healthz');
  });

  it('gives a stopping pod time to leave the Service and finish its streams', () => {
    const [command, seconds] = container.lifecycle.preStop.exec.command;
    expect(command).toBe('sleep');
    const drain = Number(configMap.data?.['DRAIN_SECONDS'] ?? 0);
    expect(drain).toBeGreaterThan(container.readinessProbe.periodSeconds);
    // preStop, the drain, up to 10 s for in-flight requests to finish, then up to one more drain for the
    // connections they leave idle.
    expect(podSpec.terminationGracePeriodSeconds).toBeGreaterThan(Number(seconds) + 2 * drain + 10);
  });

  it('keeps pods through voluntary disruptions and scales on CPU', () => {
    const budget = byKind('PodDisruptionBudget')[0]!.spec as { minAvailable: number };
    const scaler = byKind('HorizontalPodAutoscaler')[0]!.spec as { minReplicas: number; metrics: { resource: { name: string } }[] };
    expect(budget.minAvailable).toBeLessThan(scaler.minReplicas);
    expect(scaler.metrics[0]!.resource.name).toBe('cpu');
    expect(deployment.spec?.['replicas'], 'the autoscaler owns the replica count').toBeUndefined();
  });

  it('renders the optional Ingress, fixed replicas without autoscaling, and an existing Secret', () => {
    const variant = renderChart((values) => {
      (values['ingress'] as Record<string, unknown>)['enabled'] = true;
      (values['autoscaling'] as Record<string, unknown>)['enabled'] = false;
      (values['secret'] as Record<string, unknown>)['create'] = false;
    });
    const kinds = variant.map((manifest) => manifest.kind);
    expect(kinds).toContain('Ingress');
    expect(kinds).not.toContain('HorizontalPodAutoscaler');
    expect(kinds).not.toContain('Secret');
    expect(variant.find((manifest) => manifest.kind === 'Deployment')!.spec?.['replicas']).toBe(3);
    const ingress = variant.find((manifest) => manifest.kind === 'Ingress')!;
    const rules = (ingress.spec as { rules: { http: { paths: { backend: { service: { port: { name: string } } } }[] } }[] }).rules;
    expect(rules.map((rule) => rule.http.paths[0]!.backend.service.port.name)).toEqual(['api', 'console']);
  });
});
