package dev.infersim.bench.run;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.vertx.core.buffer.Buffer;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Coverage-guided fuzzing (Jazzer) of the client's stream reading: whatever bytes a server sends, and however the
 * network splits them into reads, {@link SseDecoder} yields the same events as from one read, and {@link StreamChunk}
 * reads each event's data or says why not, never throwing.
 *
 * <p>{@code JAZZER_FUZZ=1} fuzzes for {@code maxDuration} from the seeds under
 * {@code src/test/resources/dev/infersim/bench/SseReaderFuzzTestInputs} (CI: {@code .ci/run}); see
 * benchmark-client/README.md for a longer run.
 */
class SseReaderFuzzTest {

    @FuzzTest(maxDuration = "10s")
    void eventsDoNotDependOnReadBoundariesAndEveryChunkIsReadOrRefused(FuzzedDataProvider data) {
        int reads = data.consumeInt(1, 16);
        int[] cuts = new int[reads - 1];
        for (int i = 0; i < cuts.length; i++) {
            cuts[i] = data.consumeInt(0, 1 << 12);
        }
        byte[] stream = data.consumeRemainingAsBytes();

        List<String> whole = decode(stream, new int[0]);
        List<String> split = decode(stream, cuts);
        assertEquals(whole, split, "events must not depend on how the bytes were split into reads");
    }

    /** Decodes {@code stream} fed in reads cut at {@code cuts} (offsets, clipped), parsing each event as a chunk. */
    private static List<String> decode(byte[] stream, int[] cuts) {
        List<String> events = new ArrayList<>();
        StreamChunk chunk = new StreamChunk();
        SseDecoder decoder = new SseDecoder((error, bytes, length, nanos) -> {
            boolean parsed = chunk.parse(bytes, length);
            events.add(error + " " + parsed + " " + chunk.text() + " " + chunk.errorMessage() + " "
                    + new String(bytes, 0, length, java.nio.charset.StandardCharsets.ISO_8859_1));
        });
        int from = 0;
        for (int cut : cuts) {
            int to = Math.min(stream.length, from + cut);
            decoder.feed(Buffer.buffer().appendBytes(stream, from, to - from), 0);
            from = to;
        }
        decoder.feed(Buffer.buffer().appendBytes(stream, from, stream.length - from), 0);
        decoder.end(0);
        return events;
    }
}
