package dev.infersim.demo;

import dev.infersim.result.ResultJson;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The demo's comparison is read back by the type that wrote it: a committed {@code demo --quick} result (under
 * {@code results/}, written before the results were typed) read and written again gives the same bytes, so its keys,
 * order and number formatting are kept.
 */
class DemoResultRoundTripTest {
    @Test
    void aCommittedDemoComparisonIsReadAndWrittenAgainByteForByte() throws Exception {
        Path file = Path.of(DemoResultRoundTripTest.class.getResource("/results/demo-quick.json").toURI());
        assertEquals(Files.readString(file), ResultJson.text(ResultJson.read(file, DemoResult.class)));
    }
}
