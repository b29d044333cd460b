/** infersim bench. */
package dev.infersim.bench;
