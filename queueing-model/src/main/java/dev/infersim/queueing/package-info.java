/** infersim queueing. */
package dev.infersim.queueing;
