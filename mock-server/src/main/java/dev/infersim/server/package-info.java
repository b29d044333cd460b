/**
 * The OpenAI-compatible mock server behind {@code infersim serve}: a Vert.x HTTP surface ({@link
 * dev.infersim.server.routes.HttpApi}: vLLM's inference routes in {@link dev.infersim.server.routes.OpenAiRoutes}, its operations
 * routes and infersim's in {@link dev.infersim.server.routes.AdminRoutes}, request ids, the API key and error JSON in {@link
 * dev.infersim.server.routes.HttpBasics}, request checks in {@link dev.infersim.server.request.RequestParser} reading fields through
 * {@link dev.infersim.server.json.JsonFields}) in front of one engine thread per engine
 * ({@link dev.infersim.server.engine.EngineLoop}) that runs the simulator's {@link dev.infersim.engine.EngineCore} on an
 * injected clock ({@link dev.infersim.common.NanoClock}, mapped to model time by {@link
 * dev.infersim.server.engine.ModelClock}), admitting requests by the simulator's rule, so the mock and the simulator give the
 * same timeline for the same arrivals.
 *
 * <p>One request is an {@link dev.infersim.server.api.openai.CompletionExchange} on its event loop: its choices ({@link
 * dev.infersim.server.model.Choices}), written from its {@link dev.infersim.server.api.openai.ResponseContext} as SSE chunks ({@link
 * dev.infersim.server.api.openai.SseEncoder}) or one body ({@link dev.infersim.server.api.openai.WholeBody}) with Jackson's streaming
 * generator, carrying the {@code infersim} ground truth ({@link dev.infersim.server.model.ResponseTruth}) and any injected
 * fault ({@link dev.infersim.server.engine.ExchangeFault}).
 * {@code /metrics} renders vLLM's series by hand ({@link dev.infersim.server.observe.ServerMetrics}) beside Micrometer's JVM
 * and process metrics ({@link dev.infersim.server.observe.RuntimeMetrics}); {@link dev.infersim.server.fleet.MockFleet} serves
 * several replicas. Start one in-process with {@link dev.infersim.server.fleet.MockServer#start}.
 *
 * <p>The classes live in sub-packages by job, each using only those below it: {@code json}, {@code observe},
 * {@code text}, {@code config}, {@code output}, {@code kv}, {@code http}, {@code engine}, {@code request},
 * {@code model}, one {@code api.*} package per API, {@code routes}, {@code fleet} (the module's README, Packages).
 */
package dev.infersim.server;
