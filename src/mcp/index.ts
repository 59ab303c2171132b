/** `loopguard/mcp`: the guard as an MCP proxy in front of any MCP server (`loopguard mcp -- COMMAND`). */
export { McpGuardProxy, type McpGuardProxyOptions, type UpstreamServer } from './mcp-guard-proxy.js';
export { declaredSideEffects, isSideEffectTool } from './tool-side-effect.js';
