// ESLint for the extension's TypeScript (also used by tests/vscode).
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

export const rules = {
    '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    '@typescript-eslint/no-floating-promises': 'error',
    '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
    eqeqeq: ['error', 'always'],
    curly: 'error',
    'no-throw-literal': 'error',
};

// node:test's describe/it return promises that the runner itself awaits.
export const testRules = {
    '@typescript-eslint/no-floating-promises': ['error', {
        allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'before', 'after', 'beforeEach', 'afterEach'] }],
    }],
};

export default tseslint.config(
    { ignores: ['dist/**', 'out/**', 'bundled/**', 'node_modules/**', '*.mjs'] },
    eslint.configs.recommended,
    ...tseslint.configs.recommendedTypeChecked,
    {
        languageOptions: {
            parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
        },
        rules,
    },
    { files: ['test/**/*.ts'], rules: testRules },
);
