"""A process and its children: who it is, what it may spend (memory, disk), and the children it starts."""
