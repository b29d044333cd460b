/**
 * vLLM's KV-cache events over ZMQ ({@code --kv-events-config}): one publisher per engine ({@link
 * dev.infersim.server.kv.EngineKvEvents}, {@link dev.infersim.server.kv.KvEventPublisher}), its replay socket and the
 * frame allocator that keeps a hostile peer from killing JeroMQ's I/O thread. Uses only {@code config}.
 */
package dev.infersim.server.kv;
