package dev.infersim.server.json;

import java.math.BigDecimal;

/**
 * A double as Python's {@code repr} writes it, so messages vLLM builds from a float field read the same here:
 * {@code 3.0} for an integer value, plain digits from 1e-4 up to 1e16, {@code 1e-05} style outside, {@code inf}.
 */
public final class PyFloat {
    private PyFloat() {
    }

    public static String repr(double d) {
        if (Double.isNaN(d)) {
            return "nan";
        }
        if (Double.isInfinite(d)) {
            return d > 0 ? "inf" : "-inf";
        }
        double abs = Math.abs(d);
        if (abs == 0 || (abs >= 1e-4 && abs < 1e16)) {
            String plain = new BigDecimal(Double.toString(d)).toPlainString();
            return plain.contains(".") ? plain : plain + ".0";
        }
        // Java writes 1.0E-5; Python writes 1e-05 (mantissa without a trailing .0, exponent signed, two digits at least).
        String s = Double.toString(d);
        int e = s.indexOf('E');
        String mantissa = s.substring(0, e);
        if (mantissa.endsWith(".0")) {
            mantissa = mantissa.substring(0, mantissa.length() - 2);
        }
        int exponent = Integer.parseInt(s.substring(e + 1));
        return mantissa + "e" + (exponent < 0 ? "-" : "+") + String.format("%02d", Math.abs(exponent));
    }
}
