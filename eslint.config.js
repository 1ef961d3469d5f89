import tseslint from 'typescript-eslint';

const DATABASE_DRIVERS = ['kysely', 'kysely/*', 'pg', 'pg-*', 'node:sqlite'];

/**
 * Which layers of src/ may not import which: each entry names the folder and the folders (or packages) it must not
 * reach. Database drivers are storage's alone everywhere.
 */
const BOUNDARIES = [
  { folder: 'src/ir', forbidden: ['../*', '../../*'], why: 'The canonical representation depends on nothing.' },
  { folder: 'src/upstreams', forbidden: ['**/storage/*', '**/http/*'], why: 'Upstreams speak to providers; they never touch storage or the HTTP layer.' },
  { folder: 'src/relay', forbidden: ['**/http/*'], why: 'The relay returns answers; only src/http writes them.' },
  { folder: 'src/codecs', forbidden: ['**/billing/*', '**/upstreams/*', '**/http/*'], why: 'Codecs translate client wires; they know neither billing, upstreams nor the HTTP layer (families declare their routes as data).' },
];

function restrictedImports(patterns) {
  return ['error', { patterns }];
}

const driverPatterns = [{ group: DATABASE_DRIVERS, message: 'Only src/storage uses the database drivers.' }];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/', 'coverage/'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', { selector: "CallExpression[callee.property.name='only']", message: 'Focused tests skip the rest of the suite.' }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  { files: ['src/**/*.ts'], ignores: ['src/storage/**'], rules: { 'no-restricted-imports': restrictedImports(driverPatterns) } },
  ...BOUNDARIES.map(({ folder, forbidden, why }) => ({
    files: [`${folder}/**/*.ts`],
    rules: { 'no-restricted-imports': restrictedImports([...driverPatterns, { group: forbidden, message: why }]) },
  })),
);
