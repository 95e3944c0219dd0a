"""The SQLite backend (driver: apsw). ``apsw`` is imported only inside this package."""
