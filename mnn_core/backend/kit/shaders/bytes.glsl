// int8 / uint8 tensors: bytes, four to a 32-bit word (little-endian), read by element index.
int byte_value(uint word, uint i, bool is_signed) {
    uint b = (word >> ((i & 3u) * 8u)) & 0xFFu;
    return is_signed ? int(b << 24) >> 24 : int(b);
}
#define BYTE_AT(buf, i, s) byte_value(buf[(i) >> 2u], (i), (s))
