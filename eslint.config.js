import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'test-results/', 'bench/results/', 'scratch/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // process.env is read only by src/config/ (and the test setup): STYLE.md §7.
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read configuration through src/config/.' }],
      eqeqeq: ['error', 'always'],
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  { files: ['src/config/**', 'test/**', 'scripts/**', 'bench/**'], rules: { 'no-restricted-properties': 'off', 'no-console': 'off' } },
  { files: ['src/main.ts', 'src/cli/**'], rules: { 'no-console': 'off' } },
);
