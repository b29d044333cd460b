/** infersim server. */
package dev.infersim.server;
