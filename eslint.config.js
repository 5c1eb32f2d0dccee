// @ts-check
// ESLint 9 flat config with typescript-eslint 8: syntax-only rules (no type information), so linting stays fast;
// `tsc --noEmit` (npm run typecheck) covers the type side.
import js from '@eslint/js'
import { defineConfig, globalIgnores } from 'eslint/config'
import tseslint from 'typescript-eslint'

export default defineConfig(
  globalIgnores(['**/dist/', '**/node_modules/', '**/.tap/', '**/coverage/']),
  {
    files: ['lib/**/*.ts', 'examples/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommended],
    rules: {
      // `Kysely<any>` and friends are deliberate in this library.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
)
