// The public API of the `mcpcore` package (ESM); one implementation, in `index.cjs`.
import m from './index.cjs';

export const { Server, Context, HttpHandle, Client, McpError, McpcoreError } = m;
export default m;
