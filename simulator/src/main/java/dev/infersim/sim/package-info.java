/** infersim sim. */
package dev.infersim.sim;
