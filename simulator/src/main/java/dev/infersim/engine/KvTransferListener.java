package dev.infersim.engine;

/**
 * Told, on the engine's thread, when a decode engine no longer needs a prefill engine's blocks for one request: its KV
 * has arrived (the engine is about to schedule it), or it was aborted before that. vLLM's decode worker then sends the
 * prefill side its notification, upon which the prefill side frees the blocks it held
 * ({@link EngineCore#releaseKv}).
 */
@FunctionalInterface
public interface KvTransferListener {
    /**
     * @param r         the decode engine's request (its {@link EngineRequest#kvTransferEndNanos()} says when the read
     *                  ended; -1 when it was aborted before its read began)
     * @param nowNanos  when the engine noticed
     */
    void remoteKvDone(EngineRequest r, long nowNanos);
}
