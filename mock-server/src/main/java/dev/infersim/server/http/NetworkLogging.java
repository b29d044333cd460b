package dev.infersim.server.http;

import io.netty.util.internal.logging.InternalLogger;
import io.netty.util.internal.logging.InternalLoggerFactory;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.ZoneId;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.SimpleFormatter;

/**
 * Logging that cannot throw on a network thread. Out of file descriptors, the acceptor thread's warning about it went to
 * java.util.logging, whose formatter then loaded the time-zone rules from a file for the first time, could not open it,
 * and threw an Error that ended the thread: the process lived on and accepted nothing. So, once, while descriptors are
 * still there: the formatter's lazy state (the zone rules, its classes) is loaded by formatting a record, and Netty's
 * loggers are wrapped so that a logging call that fails anyway drops its message rather than its thread.
 */
public final class NetworkLogging {
    private static boolean installed;

    private NetworkLogging() {
    }

    /** Idempotent; call before the first Netty channel is made (loggers made earlier are not wrapped). */
    public static synchronized void install() {
        if (installed) {
            return;
        }
        installed = true;
        ZoneId.systemDefault().getRules();
        new SimpleFormatter().format(new LogRecord(Level.WARNING, "warm-up {0}"));
        InternalLoggerFactory base = InternalLoggerFactory.getDefaultFactory();
        Method make;
        try {
            // the factory's own method (getInstance is static and would ask the default factory, this one, again)
            make = InternalLoggerFactory.class.getDeclaredMethod("newInstance", String.class);
            make.setAccessible(true);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return; // a Netty without it: its loggers stay as they are
        }
        InternalLoggerFactory.setDefaultFactory(new InternalLoggerFactory() {
            @Override
            protected InternalLogger newInstance(String name) {
                try {
                    return neverThrowing((InternalLogger) make.invoke(base, name));
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException("cannot make Netty's logger " + name, e);
                }
            }
        });
    }

    private static InternalLogger neverThrowing(InternalLogger logger) {
        return (InternalLogger) Proxy.newProxyInstance(InternalLogger.class.getClassLoader(), new Class<?>[] {InternalLogger.class},
                (proxy, method, args) -> {
                    try {
                        return method.invoke(logger, args);
                    } catch (Throwable t) {
                        return method.getReturnType() == boolean.class ? Boolean.FALSE : null;
                    }
                });
    }
}
