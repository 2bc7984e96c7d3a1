import sys

from pyconnect.strimzi.launch import main

sys.exit(main(sys.argv[1:]))
