/**
 * The server's surface: the Vert.x router of one replica ({@link dev.infersim.server.routes.HttpApi}) with vLLM's
 * inference routes ({@link dev.infersim.server.routes.OpenAiRoutes}), its operations and infersim's admin routes, sleep
 * mode, the token-id routes, and vLLM's gRPC engine service. The only package that knows a path; uses every package
 * below it and none above ({@code fleet}).
 */
package dev.infersim.server.routes;
