package dev.infersim.bench.report;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a browser made of an HTML report: its body after the scripts ran, and the uncaught errors the console logged.
 * Reads the ECharts SVG output: each chart is one svg; a series drawn as a line is a path with a bevel line join and at
 * least one segment, a series point drawn as a symbol is a path placed by a matrix transform, and each legend entry
 * is an icon path in the series' colour.
 */
record RenderedReport(String html, List<String> consoleErrors) {
    private static final Pattern SVG = Pattern.compile("<svg[^>]*>.*?</svg>", Pattern.DOTALL);
    private static final Pattern WIDTH = Pattern.compile("<svg[^>]*\\swidth=\"([0-9.]+)\"");
    private static final Pattern TITLE = Pattern.compile("<text[^>]*font-weight:bold;[^>]*>([^<]*)</text>");
    /** A legend's icon: a line series' stroke, or a scatter series' circle (a run flagged invalid is an open one). */
    private static final Pattern LEGEND_ICON = Pattern.compile(
            "<path d=\"(?:M0 7L25 7|M19\\.5 7A7 7 [^\"]*)\" transform=\"translate[^\"]*\"[^>]*stroke=\"([^\"]+)\"");
    private static final Pattern LINE = Pattern.compile("<path d=\"(M[^\"]*)\" fill=\"none\" stroke=\"([^\"]+)\"[^>]*stroke-linejoin=\"bevel\"");
    private static final Pattern SYMBOL = Pattern.compile("<path d=\"[^\"]*\" transform=\"matrix\\([^\"]*\"[^>]*stroke=\"([^\"]+)\"");
    private static final Pattern ROW = Pattern.compile("<tr><th>((?:[^<]|<wbr>)*)</th><td>([^<]*)</td></tr>");

    /** The svg of every chart, in page order. */
    List<String> charts() {
        List<String> out = new ArrayList<>();
        Matcher m = SVG.matcher(html);
        while (m.find()) {
            out.add(m.group());
        }
        return out;
    }

    /** Every chart's title, in page order. */
    List<String> chartTitles() {
        return charts().stream().map(RenderedReport::title).toList();
    }

    /** The charts that drew nothing where they should: no width, or a legend entry whose series left no mark. */
    List<String> undrawn() {
        List<String> out = new ArrayList<>();
        for (String svg : charts()) {
            Matcher w = WIDTH.matcher(svg);
            if (!w.find() || Double.parseDouble(w.group(1)) < 100) {
                out.add(title(svg) + ": no width");
            }
            List<String> legend = all(LEGEND_ICON, svg, 1);
            if (legend.isEmpty()) {
                out.add(title(svg) + ": no legend, so no series");
            }
            List<String> marked = new ArrayList<>(all(SYMBOL, svg, 1));
            Matcher line = LINE.matcher(svg);
            while (line.find()) {
                if (line.group(1).contains("L")) {
                    marked.add(line.group(2));
                }
            }
            for (String colour : legend) {
                if (!marked.contains(colour)) {
                    out.add(title(svg) + ": the series in " + colour + " drew nothing");
                }
            }
        }
        return out;
    }

    /** The report's own error lines (a chart or section that threw). */
    List<String> errorLines() {
        return all(Pattern.compile("<p class=\"report-error\">([^<]*)</p>"), html, 1);
    }

    /** What a reader would see wrong: overlapping or clipped labels, series or markers outside their plot. */
    List<String> layoutProblems() {
        return all(Pattern.compile("<li>([^<]*)</li>"), html.substring(Math.max(0, html.lastIndexOf("<ol class=\"layout-problems\">"))), 1);
    }

    /** The notes written where a chart had nothing to plot. */
    List<String> noDataNotes() {
        return all(Pattern.compile("<p class=\"no-data\">([^<]*)</p>"), html, 1);
    }

    /** Table rows, key to shown value, the first occurrence of each key (one run's metadata on a one-run page). */
    Map<String, String> rows() {
        Map<String, String> out = new LinkedHashMap<>();
        Matcher m = ROW.matcher(html);
        while (m.find()) {
            out.putIfAbsent(text(m.group(1).replace("<wbr>", "")), text(m.group(2)));
        }
        return out;
    }

    private static String title(String svg) {
        Matcher m = TITLE.matcher(svg);
        return m.find() ? text(m.group(1)) : "(untitled chart)";
    }

    private static List<String> all(Pattern p, String s, int group) {
        List<String> out = new ArrayList<>();
        Matcher m = p.matcher(s);
        while (m.find()) {
            out.add(text(m.group(group)));
        }
        return out;
    }

    /** Serialized text back to what the page shows. */
    private static String text(String serialized) {
        return serialized.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&nbsp;", "\u00a0")
                .replace("&amp;", "&");
    }
}
