// The end-to-end test follows the extension's lint rules.
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

import { rules, testRules } from '../../client-vscode/eslint.config.mjs';

export default tseslint.config(
    { ignores: ['out/**', 'fixtures/**', '*.mjs'] },
    eslint.configs.recommended,
    ...tseslint.configs.recommendedTypeChecked,
    {
        languageOptions: {
            parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
        },
        rules: { ...rules, ...testRules },
    },
);
