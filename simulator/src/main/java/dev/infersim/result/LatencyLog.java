package dev.infersim.result;

import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;
import org.HdrHistogram.HistogramLogWriter;

import java.io.ByteArrayOutputStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A run's latency histograms in HdrHistogram's own log format ({@code .hlog}, written by {@link HistogramLogWriter}):
 * one interval histogram per metric, tagged with its name (ttft, tpot, itl, e2el, send_lag, ...), values in
 * nanoseconds, time stamps on the wall clock. Any HdrHistogram tool reads it; {@code infersim merge} adds the
 * histograms of several shards tag by tag, so merged percentiles are those of all samples together, never averages of
 * percentiles.
 */
public final class LatencyLog {
    private LatencyLog() {
    }

    /**
     * Writes one tagged histogram per entry of {@code byTag}.
     *
     * @param startEpochMillis wall-clock start of the span the histograms cover
     * @param endEpochMillis   wall-clock end of that span
     */
    public static void write(Path file, long startEpochMillis, long endEpochMillis, Map<String, LatencyStats> byTag) {
        // HdrHistogram's writer prints and swallows I/O errors, so it writes into memory (a log is a few kilobytes a tag)
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        HistogramLogWriter log = new HistogramLogWriter(new PrintStream(bytes, false, StandardCharsets.UTF_8));
        log.outputLogFormatVersion();
        log.outputStartTime(startEpochMillis);
        log.setBaseTime(startEpochMillis);
        log.outputLegend();
        byTag.forEach((tag, stats) -> {
            Histogram h = stats.histogram();
            h.setTag(tag);
            h.setStartTimeStamp(startEpochMillis);
            h.setEndTimeStamp(endEpochMillis);
            log.outputIntervalHistogram(h);
        });
        log.close();
        OutputFile.write(file, bytes::writeTo);
    }

    /** Every tag's histograms in the log, added together, in the order the tags first appear. */
    public static Map<String, Histogram> read(Path file) {
        Map<String, Histogram> byTag = new LinkedHashMap<>();
        try {
            HistogramLogReader log = new HistogramLogReader(file.toFile());
            try {
                EncodableHistogram next;
                while ((next = log.nextIntervalHistogram()) != null) {
                    if (!(next instanceof Histogram h) || next.getTag() == null) {
                        throw new IOException("an interval without a tag or with floating-point values");
                    }
                    byTag.computeIfAbsent(h.getTag(), tag -> {
                        Histogram sum = new Histogram(3);
                        sum.setAutoResize(true);
                        return sum;
                    }).add(h);
                }
            } finally {
                log.close();
            }
            return byTag;
        } catch (FileNotFoundException e) {
            throw new UncheckedIOException("histogram log " + file + " does not exist", e);
        } catch (IOException | RuntimeException e) {
            throw new UncheckedIOException("cannot read histogram log " + file + ": " + e.getMessage(),
                    e instanceof IOException io ? io : new IOException(e));
        }
    }
}
