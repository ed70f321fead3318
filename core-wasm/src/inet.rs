//! PostgreSQL's `inet`: an IPv4 or IPv6 address with a prefix length.
//!
//! A value is [`crate::types::Value::Bytes`] laid out as family (4 or 6), the address bytes,
//! then the prefix length, so byte order sorts as PostgreSQL does for host addresses: IPv4
//! before IPv6, then by address, then by prefix. (PostgreSQL compares networks with different
//! prefixes on their common prefix first; two such values with different host bits can sort
//! the other way here.)

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// `inet`'s text input: `address[/prefix]`; `None` when it is not one. As PostgreSQL's: no
/// surrounding spaces, IPv4 octets may have leading zeros, and with a prefix an IPv4
/// address may give fewer octets (`10/8`).
pub fn parse(s: &str) -> Option<Vec<u8>> {
    let (addr, bits) = match s.split_once('/') {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    };
    let addr: IpAddr = if addr.contains(':') {
        addr.parse().ok()?
    } else {
        IpAddr::V4(parse_v4(addr, bits.is_some())?)
    };
    let max = match addr {
        IpAddr::V4(_) => 32,
        IpAddr::V6(_) => 128,
    };
    let bits = match bits {
        // Digits only: PostgreSQL takes no sign or spaces in the prefix.
        Some(b) if !b.is_empty() && b.bytes().all(|c| c.is_ascii_digit()) => {
            b.parse::<u8>().ok().filter(|&n| n <= max)?
        }
        Some(_) => return None,
        None => max,
    };
    Some(encode(addr, bits))
}

/// Dotted decimal octets (up to three digits each); fewer than four only when `short`.
fn parse_v4(s: &str, short: bool) -> Option<Ipv4Addr> {
    let mut octets = [0u8; 4];
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() > 4 || (!short && parts.len() != 4) {
        return None;
    }
    for (o, p) in octets.iter_mut().zip(&parts) {
        if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *o = p.parse().ok()?;
    }
    Some(Ipv4Addr::from(octets))
}

/// An IPv6 address as PostgreSQL writes it: RFC 5952's compressed form, with the last 32
/// bits as IPv4 after 96 zero bits (`::1.2.3.4`, not `::1` itself) or after `::ffff:`.
fn format_v6(a: Ipv6Addr) -> String {
    let w = a.segments();
    if w[..6].iter().all(|x| *x == 0) && w[6] != 0 {
        let o = a.octets();
        return format!("::{}.{}.{}.{}", o[12], o[13], o[14], o[15]);
    }
    a.to_string()
}

fn encode(addr: IpAddr, bits: u8) -> Vec<u8> {
    let mut out = Vec::with_capacity(18);
    match addr {
        IpAddr::V4(a) => {
            out.push(4);
            out.extend_from_slice(&a.octets());
        }
        IpAddr::V6(a) => {
            out.push(6);
            out.extend_from_slice(&a.octets());
        }
    }
    out.push(bits);
    out
}

/// The address and prefix length of a stored value.
fn decode(b: &[u8]) -> Option<(IpAddr, u8)> {
    match b {
        [4, a, b1, c, d, bits] => Some((IpAddr::V4(Ipv4Addr::new(*a, *b1, *c, *d)), *bits)),
        [6, rest @ ..] if rest.len() == 17 => {
            let mut o = [0u8; 16];
            o.copy_from_slice(&rest[..16]);
            Some((IpAddr::V6(Ipv6Addr::from(o)), rest[16]))
        }
        _ => None,
    }
}

fn address_text(addr: IpAddr) -> String {
    match addr {
        IpAddr::V4(a) => a.to_string(),
        IpAddr::V6(a) => format_v6(a),
    }
}

/// `inet`'s text output: the address, and `/prefix` unless it is a single host.
pub fn format(b: &[u8]) -> String {
    match decode(b) {
        Some((addr @ IpAddr::V4(_), 32)) | Some((addr @ IpAddr::V6(_), 128)) => address_text(addr),
        Some((addr, bits)) => format!("{}/{bits}", address_text(addr)),
        None => String::new(),
    }
}

/// `inet` cast to text (PostgreSQL's `network_show`): always with the prefix length.
pub fn show(b: &[u8]) -> String {
    match decode(b) {
        Some((addr, bits)) => format!("{}/{bits}", address_text(addr)),
        None => String::new(),
    }
}

/// PostgreSQL's binary send format: family (2 for IPv4, 3 for IPv6), prefix length, the cidr
/// flag (0), the address length, the address.
pub fn to_binary(b: &[u8], out: &mut Vec<u8>) {
    if let Some((addr, bits)) = decode(b) {
        match addr {
            IpAddr::V4(a) => {
                out.extend_from_slice(&[2, bits, 0, 4]);
                out.extend_from_slice(&a.octets());
            }
            IpAddr::V6(a) => {
                out.extend_from_slice(&[3, bits, 0, 16]);
                out.extend_from_slice(&a.octets());
            }
        }
    }
}

/// PostgreSQL's binary receive format (see [`to_binary`]); `None` when malformed.
pub fn from_binary(b: &[u8]) -> Option<Vec<u8>> {
    match b {
        [2, bits, _, 4, a @ ..] if a.len() == 4 && *bits <= 32 => Some(encode(
            IpAddr::V4(Ipv4Addr::new(a[0], a[1], a[2], a[3])),
            *bits,
        )),
        [3, bits, _, 16, a @ ..] if a.len() == 16 && *bits <= 128 => {
            let mut o = [0u8; 16];
            o.copy_from_slice(a);
            Some(encode(IpAddr::V6(Ipv6Addr::from(o)), *bits))
        }
        _ => None,
    }
}

/// `host(inet)`: the address alone, without the prefix length.
pub fn host(b: &[u8]) -> Option<String> {
    decode(b).map(|(addr, _)| address_text(addr))
}

/// `masklen(inet)`.
pub fn masklen(b: &[u8]) -> Option<i64> {
    decode(b).map(|(_, bits)| i64::from(bits))
}

/// `family(inet)`: 4 or 6.
pub fn family(b: &[u8]) -> Option<i64> {
    decode(b).map(|(addr, _)| if addr.is_ipv4() { 4 } else { 6 })
}

/// The address as one integer and its width in bits.
fn as_bits(addr: IpAddr) -> (u128, u32) {
    match addr {
        IpAddr::V4(a) => (u128::from(u32::from(a)), 32),
        IpAddr::V6(a) => (u128::from(a), 128),
    }
}

fn from_bits(v: u128, width: u32) -> IpAddr {
    if width == 32 {
        // Only the low 32 bits are set for an IPv4 value.
        IpAddr::V4(Ipv4Addr::from(v as u32))
    } else {
        IpAddr::V6(Ipv6Addr::from(v))
    }
}

/// The network mask of `bits` leading ones in a `width`-bit address.
fn mask(bits: u8, width: u32) -> u128 {
    let all = if width == 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    };
    if bits == 0 {
        0
    } else {
        all & !((1u128 << (width - u32::from(bits))) - 1) & all
    }
}

/// `netmask(inet)`, `hostmask(inet)` (single hosts of the full width) and `broadcast(inet)`
/// (the address with every host bit set, keeping the prefix length), as PostgreSQL's.
pub fn derived(b: &[u8], which: &str) -> Option<Vec<u8>> {
    let (addr, bits) = decode(b)?;
    let (v, width) = as_bits(addr);
    let net = mask(bits, width);
    let all = if width == 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    };
    let full = width as u8;
    Some(match which {
        "netmask" => encode(from_bits(net, width), full),
        "hostmask" => encode(from_bits(all & !net, width), full),
        _ => encode(from_bits(v | (all & !net), width), bits),
    })
}

/// `set_masklen(inet, n)`: the same address with prefix length `n` (-1: the full width);
/// `None` for a length the family cannot have.
pub fn set_masklen(b: &[u8], n: i64) -> Option<Option<Vec<u8>>> {
    let (addr, _) = decode(b)?;
    let width = if addr.is_ipv4() { 32 } else { 128 };
    let n = if n == -1 { width } else { n };
    Some(
        u8::try_from(n)
            .ok()
            .filter(|n| i64::from(*n) <= width)
            .map(|n| encode(addr, n)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn text_round_trips_as_postgres_prints_it() {
        for (input, out) in [
            ("127.0.0.1", "127.0.0.1"),
            ("127.0.0.1/32", "127.0.0.1"),
            ("10.0.0.0/8", "10.0.0.0/8"),
            ("192.168.1.5/24", "192.168.1.5/24"),
            ("001.002.003.004", "1.2.3.4"),
            ("10/8", "10.0.0.0/8"),
            ("1.2.3.4/08", "1.2.3.4/8"),
            ("::1.2.3.4", "::1.2.3.4"),
            ("0:0:0:0:0:1:1.2.3.4", "::1:102:304"),
            ("1:0:0:1:0:0:0:1", "1:0:0:1::1"),
            ("::", "::"),
            ("::1", "::1"),
            ("::1/128", "::1"),
            ("2001:DB8::/32", "2001:db8::/32"),
            ("::ffff:1.2.3.4", "::ffff:1.2.3.4"),
        ] {
            let v = parse(input).unwrap_or_else(|| panic!("{input}"));
            assert_eq!(format(&v), out, "{input}");
            assert!(
                show(&v).starts_with(out) && show(&v).contains('/'),
                "{input}"
            );
        }
        for bad in [
            "",
            "1.2.3",
            "10",
            " 1.2.3.4",
            "1.2.3.4 ",
            "256.1.1.1",
            "1.2.3.4/33",
            "::1/129",
            "1.2.3.4/",
            "1.2.3.4/+8",
            "x",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn hosts_sort_by_family_then_address() {
        let mut v: Vec<Vec<u8>> = ["::1", "10.0.0.10", "10.0.0.2", "9.255.255.255"]
            .iter()
            .filter_map(|s| parse(s))
            .collect();
        v.sort();
        let names: Vec<String> = v.iter().map(|b| format(b)).collect();
        assert_eq!(names, ["9.255.255.255", "10.0.0.2", "10.0.0.10", "::1"]);
    }

    proptest! {
        #[test]
        fn binary_round_trips(v6 in any::<bool>(), octets in any::<[u8; 16]>(), bits in 0u8..=128) {
            let addr = if v6 {
                IpAddr::V6(Ipv6Addr::from(octets))
            } else {
                IpAddr::V4(Ipv4Addr::new(octets[0], octets[1], octets[2], octets[3]))
            };
            let bits = if v6 { bits } else { bits % 33 };
            let v = encode(addr, bits);
            let mut wire = Vec::new();
            to_binary(&v, &mut wire);
            prop_assert_eq!(from_binary(&wire), Some(v.clone()));
            prop_assert_eq!(parse(&format(&v)), Some(v));
        }
    }
}
