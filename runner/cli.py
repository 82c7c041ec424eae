"""placeholder"""


def main() -> int:
    return 4
