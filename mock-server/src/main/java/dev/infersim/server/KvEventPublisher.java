package dev.infersim.server;

import dev.infersim.engine.KvEventListener;
import dev.infersim.engine.LoraAdapter;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Publishes one engine's KV-cache events as vLLM's ZMQ publisher does ({@code vllm/distributed/kv_events.py},
 * {@code ZmqEventPublisher}): a PUB socket that binds when the endpoint has a wildcard host ({@code *}) and connects
 * otherwise; one message per engine step that changed the cache, of three frames: the topic (UTF-8), a sequence number
 * (8 bytes big-endian, from 0, one per message), and the msgpack payload {@code KVEventBatch} as an array
 * {@code [ts, events, data_parallel_rank]} (ts = Unix seconds as float64; the rank nil without data parallelism).
 * Events are msgspec's {@code array_like} tagged structs, every field present in declaration order:
 * {@code ["BlockStored", block_hashes, parent_block_hash, token_ids, block_size, lora_id, medium, lora_name,
 * extra_keys, group_idx, kv_cache_spec_kind, kv_cache_spec_sliding_window]} and
 * {@code ["BlockRemoved", block_hashes, medium, group_idx]}; hashes are unsigned 64-bit integers, medium "GPU",
 * {@code lora_id} and {@code lora_name} the adapter's id and name when a request on an adapter stored the block (nil
 * on the base model), the later fields nil. Data-parallel rank r publishes on the endpoint's port + r, as vLLM's ranks do; replicas of
 * one process that bind take ports after one another's.
 * Used only from the engine thread, which owns the socket.
 */
final class KvEventPublisher implements KvEventListener, AutoCloseable {
    private final ZContext context = new ZContext(1);
    private final ZMQ.Socket socket;
    private final byte[] topic;
    private final Integer dataParallelRank;
    private final MessageBufferPacker events = MessagePack.newDefaultBufferPacker();
    private int eventCount;
    private long seq;

    /**
     * @param dataParallelRank the engine's rank under data parallelism, or null without it
     * @param replicaOffset    the first port of this replica's engines past the endpoint's, when it binds
     */
    KvEventPublisher(KvEventsConfig config, Integer dataParallelRank, int replicaOffset) {
        this.topic = config.topic().getBytes(StandardCharsets.UTF_8);
        this.dataParallelRank = dataParallelRank;
        int rank = dataParallelRank == null ? 0 : dataParallelRank;
        socket = context.createSocket(SocketType.PUB);
        socket.setSndHWM(100_000); // vLLM's default hwm
        if (config.binds()) {
            socket.bind(config.endpointPlus(replicaOffset + rank));
        } else {
            socket.connect(config.endpointPlus(rank));
        }
    }

    @Override
    public void blockStored(long hash, long parentHash, int[] tokenIds, int from, int blockSize, LoraAdapter lora) {
        try {
            events.packArrayHeader(12).packString("BlockStored");
            events.packArrayHeader(1);
            packHash(hash);
            if (parentHash == 0) {
                events.packNil();
            } else {
                packHash(parentHash);
            }
            events.packArrayHeader(blockSize);
            for (int i = from; i < from + blockSize; i++) {
                events.packInt(tokenIds[i]);
            }
            events.packInt(blockSize);
            if (lora == null) {
                events.packNil().packString("GPU").packNil();
            } else {
                events.packInt(lora.id()).packString("GPU").packString(lora.name());
            }
            events.packNil().packNil().packNil().packNil();
            eventCount++;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void blockRemoved(long hash) {
        try {
            events.packArrayHeader(4).packString("BlockRemoved").packArrayHeader(1);
            packHash(hash);
            events.packString("GPU").packNil();
            eventCount++;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Python ints are unbounded and msgspec writes a non-negative one as unsigned: a hash above 2^63 is uint64. */
    private void packHash(long hash) throws IOException {
        if (hash >= 0) {
            events.packLong(hash);
        } else {
            events.packBigInteger(new BigInteger(Long.toUnsignedString(hash)));
        }
    }

    /** Sends the step's events as one batch, if there were any. */
    void flush() {
        if (eventCount == 0) {
            return;
        }
        try (MessageBufferPacker batch = MessagePack.newDefaultBufferPacker()) {
            batch.packArrayHeader(3).packDouble(System.currentTimeMillis() / 1000.0).packArrayHeader(eventCount);
            batch.writePayload(events.toByteArray());
            if (dataParallelRank == null) {
                batch.packNil();
            } else {
                batch.packInt(dataParallelRank);
            }
            socket.sendMore(topic);
            socket.sendMore(ByteBuffer.allocate(Long.BYTES).putLong(seq++).array());
            socket.send(batch.toByteArray(), ZMQ.DONTWAIT);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            events.clear();
            eventCount = 0;
        }
    }

    @Override
    public void close() {
        context.close();
    }
}
