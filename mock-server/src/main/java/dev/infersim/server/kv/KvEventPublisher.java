package dev.infersim.server.kv;

import dev.infersim.common.ConfigException;
import dev.infersim.engine.KvEventListener;
import dev.infersim.engine.LoraAdapter;
import dev.infersim.server.config.KvEventsConfig;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMQException;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;

/**
 * Publishes one engine's KV-cache events as vLLM's ZMQ publisher does ({@code vllm-project/vllm@9aaf83ef5}:
 * {@code vllm/distributed/kv_events.py} {@code ZmqEventPublisher}, the events made by
 * {@code vllm/v1/core/block_pool.py}): a PUB socket that binds when the endpoint has a wildcard host ({@code *}) and
 * connects otherwise; one message per engine step that changed the cache, of three frames: the topic (UTF-8), a
 * sequence number (8 bytes big-endian, from 0, one per message), and the msgpack payload {@code KVEventBatch} as an
 * array {@code [ts, events, data_parallel_rank]} (ts = Unix seconds as float64; the engine's data-parallel rank, 0
 * without data parallelism, as {@code ZmqEventPublisher.publish} fills in its own rank where the batch has none).
 * Events are msgspec's tagged structs, by default {@code array_like} with every field in declaration order:
 * {@code ["BlockStored", block_hashes, parent_block_hash, token_ids, block_size, lora_id, medium, lora_name,
 * extra_keys, group_idx, kv_cache_spec_kind, kv_cache_spec_sliding_window]},
 * {@code ["BlockRemoved", block_hashes, medium, group_idx]} and {@code ["AllBlocksCleared"]}. One BlockStored lists
 * the consecutive blocks one request stored in a step: their hashes (the low 64 bits of vLLM's block hashes, as
 * unsigned integers), the hash of the block before them (nil for a prompt's first), their token ids, and per block its
 * extra keys ({@code [lora_name]} on a LoRA adapter, else nil); {@code lora_id} and {@code lora_name} name the adapter
 * (nil on the base model), medium is "GPU", the KV-cache group 0, the spec fields nil. With {@code mapEvents} each event
 * is instead a map of the same fields, {@code "type"} first, the form vLLM sends since its PR #42892; that vLLM also
 * names the group's KV-cache spec, {@code kv_cache_spec_kind} "full_attention" (the only kind a dense model's one
 * group has), and leaves {@code kv_cache_spec_sliding_window} out at its default.
 * With a replay endpoint the last messages are also kept for {@link KvEventReplay}. Data-parallel rank r publishes
 * (and replays) on the endpoints' ports + r, as vLLM's ranks do; replicas of one process take ports after one
 * another's wherever they bind. Used only from the engine thread, which owns the PUB socket; only the topic may be set
 * from another thread, once the server knows its port.
 */
final class KvEventPublisher implements KvEventListener, AutoCloseable {
    /**
     * A connection whose ZMTP handshake has not finished by then is dropped and made again. Now and then JeroMQ leaves
     * the handshake of a connection it opens hanging (between 1 in 13 and 1 in 60 loopback connections in loops of
     * 120-150); at its default of 30 s a connecting publisher's subscriber then hears nothing for half a minute, with
     * 1 s it hears the steps after the next second. JeroMQ clients (tests) set it for the same reason.
     */
    static final int HANDSHAKE_MS = 1_000;
    /**
     * The largest message a peer may send the PUB socket (ZMQ_MAXMSGSIZE): subscribers send only their subscriptions,
     * a topic prefix each. ZMQ reads a frame's length before its bytes and drops a peer announcing more, where without a
     * limit it allocated the announced size (2 GB from a 109-byte greeting killed the socket's I/O thread).
     */
    static final long MAX_INBOUND_BYTES = 64 * 1024;

    private final ZContext context = new ZContext(1);
    private final ZMQ.Socket socket;
    private final KvEventReplay replay;
    private volatile byte[] topic;
    private final boolean mapEvents;
    private final int dataParallelRank;
    /** vLLM's {@code KVCacheSpecKind.FULL_ATTENTION}, the spec of a dense model's one KV-cache group. */
    static final String FULL_ATTENTION = "full_attention";
    private final MessageBufferPacker events = MessagePack.newDefaultBufferPacker();
    private int eventCount;
    private long seq;

    /**
     * Opens the sockets; a bind or connect that fails closes everything and throws a {@link ConfigException} naming
     * the endpoint, as vLLM's engine fails to start.
     *
     * @param dataParallelRank the engine's rank under data parallelism, or null without it (published as 0)
     * @param replicaOffset    the first port of this replica's engines past the endpoints', where they bind
     */
    KvEventPublisher(KvEventsConfig config, Integer dataParallelRank, int replicaOffset) {
        this.topic = config.topic() == null ? new byte[0] : config.topic().getBytes(StandardCharsets.UTF_8);
        this.mapEvents = config.mapEvents();
        int rank = dataParallelRank == null ? 0 : dataParallelRank;
        this.dataParallelRank = rank;
        String endpoint = config.binds() ? config.endpointPlus(replicaOffset + rank) : config.endpointPlus(rank);
        String replayEndpoint = config.replayEndpointPlus(replicaOffset + rank);
        try {
            ZMQ.Socket pub = context.createSocket(SocketType.PUB);
            pub.setSndHWM(config.hwm());
            pub.setHandshakeIvl(HANDSHAKE_MS);
            pub.setMaxMsgSize(MAX_INBOUND_BYTES);
            pub.setMsgAllocator(new ZmtpFrameAllocator(MAX_INBOUND_BYTES));
            pub.setIPv6(endpoint.startsWith("tcp://["));
            open(endpoint, config.binds() ? "bind" : "connect", () -> config.binds() ? pub.bind(endpoint) : pub.connect(endpoint));
            socket = pub;
            replay = replayEndpoint == null ? null : open(replayEndpoint, "bind", () -> new KvEventReplay(context,
                    replayEndpoint, topic, config.bufferSteps(), "infersim-kv-replay-" + replayEndpoint));
        } catch (RuntimeException e) {
            context.close();
            throw e;
        }
    }

    private static <T> T open(String endpoint, String verb, Supplier<T> open) {
        try {
            return open.get();
        } catch (ZMQException e) {
            throw new ConfigException("KV events: cannot " + verb + " " + endpoint + " (" + reason(e) + ")");
        }
    }

    private static String reason(ZMQException e) {
        try {
            return ZMQ.Error.findByCode(e.getErrorCode()).getMessage();
        } catch (IllegalArgumentException unknownCode) {
            return e.getMessage();
        }
    }

    /** Sets the topic of the messages from now on (and of their replays). */
    void topic(String t) {
        topic = t.getBytes(StandardCharsets.UTF_8);
        if (replay != null) {
            replay.topic(topic);
        }
    }

    @Override
    public void blockStored(long[] hashes, int first, int count, long parentHash, int[] tokenIds, int blockSize,
                            LoraAdapter lora) {
        try {
            startEvent("BlockStored", 11);
            field("block_hashes").packArrayHeader(count);
            for (int i = first; i < first + count; i++) {
                packHash(hashes[i]);
            }
            field("parent_block_hash");
            if (parentHash == 0) {
                events.packNil();
            } else {
                packHash(parentHash);
            }
            field("token_ids").packArrayHeader(count * blockSize);
            for (int i = first * blockSize, end = (first + count) * blockSize; i < end; i++) {
                events.packInt(tokenIds[i]);
            }
            field("block_size").packInt(blockSize);
            if (lora == null) {
                field("lora_id").packNil();
                field("medium").packString("GPU");
                field("lora_name").packNil();
            } else {
                field("lora_id").packInt(lora.id());
                field("medium").packString("GPU");
                field("lora_name").packString(lora.name());
            }
            field("extra_keys").packArrayHeader(count);
            for (int i = 0; i < count; i++) {
                if (lora == null) {
                    events.packNil();
                } else {
                    events.packArrayHeader(1).packString(lora.name());
                }
            }
            field("group_idx").packInt(0);
            if (mapEvents) {
                field("kv_cache_spec_kind").packString(FULL_ATTENTION);
            } else {
                events.packNil().packNil(); // kv_cache_spec_kind, kv_cache_spec_sliding_window
            }
            eventCount++;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void blockRemoved(long hash) {
        try {
            startEvent("BlockRemoved", 3);
            field("block_hashes").packArrayHeader(1);
            packHash(hash);
            field("medium").packString("GPU");
            field("group_idx").packInt(0);
            eventCount++;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void allBlocksCleared() {
        try {
            startEvent("AllBlocksCleared", 0);
            eventCount++;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Opens an event: an array of the tag and its {@code arrayFields} fields, or a map of {@code "type"} and the
     * {@code mapFields} fields a map carries ({@code arrayFields} less the trailing one at its default).
     */
    private void startEvent(String tag, int arrayFields) throws IOException {
        if (mapEvents) {
            int mapFields = tag.equals("BlockStored") ? arrayFields - 1 : arrayFields; // no sliding window
            events.packMapHeader(1 + mapFields).packString("type").packString(tag);
        } else {
            events.packArrayHeader(1 + arrayFields).packString(tag);
        }
    }

    /** The field's key in the map form; nothing in the array form. */
    private MessageBufferPacker field(String name) throws IOException {
        if (mapEvents) {
            events.packString(name);
        }
        return events;
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
            batch.packInt(dataParallelRank);
            byte[] payload = batch.toByteArray();
            socket.sendMore(topic); // volatile: set once the server knows its port
            socket.sendMore(ByteBuffer.allocate(Long.BYTES).putLong(seq).array());
            socket.send(payload, ZMQ.DONTWAIT);
            if (replay != null) {
                replay.add(seq, payload);
            }
            seq++;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            events.clear();
            eventCount = 0;
        }
    }

    @Override
    public void close() {
        if (replay != null) {
            replay.close();
        }
        context.close();
    }
}
